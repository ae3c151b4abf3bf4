import Foundation
import LMDB

/// Evaluates a ``QueryExpression`` to the exact set of matching document
/// ids, using the indexes for candidates and reading stored documents only
/// to confirm them.
///
/// - Numbers and dates (`<`, `>`, `<=`, `>=`, `==`, `InRange`): a range of
///   the attribute index; exact, no document is read.
/// - Strings on attributes: the attribute index gives the documents whose
///   folded value equals the literal (no `*`), starts with the first
///   literal, or has the attribute at all.
/// - Strings on text fields: the postings give the documents that have, in
///   that field, each whole word of the literals (and each word cut by a
///   `*` as a prefix); without such a word, the documents that have the field.
/// - Candidates are then checked against the stored document.
/// - `&&` evaluates its right side only within the left side's result;
///   `!=` is the complement of `==` within what is being evaluated.
///
/// Every key it reads is of the index's space (a range of keys that start
/// with the space id); ``reads`` counts the lookups (see ``ReadCost``).
///
/// ```swift
/// var evaluator = try QueryEvaluator(index: index, txn: txn)
/// let ids = try evaluator.evaluate(expression, within: nil)
/// ```
struct QueryEvaluator {
    let index: TextIndex
    let txn: ReadTransaction
    /// The transaction the content readers read in.
    let contentTxn: ReadTransaction
    let textFields: Set<String>
    let values: Cursor<[UInt8], [UInt8]>
    let postings: Cursor<[UInt8], [UInt8]>
    /// The open block's runs, page by page (``RunPage``).
    var runs: RunCursor
    let blocks: Cursor<[UInt8], [UInt8]>
    /// Sealed blocks, then the open block's runs.
    let sources: [TextIndex.PostingSource]
    var universe: Set<UInt32>?
    /// LMDB lookups made.
    var reads = 2
    /// What the query may cost (``QueryLimits``), what it has cost, and its deadline (uptime nanoseconds).
    let limits: QueryLimits
    private(set) var work = 0
    private(set) var expansions = 0
    private let started: UInt64
    private let deadline: UInt64?

    /// `contentTxn`: where the content readers read (``TextIndex/query(_:now:in:contentIn:)``).
    init(index: TextIndex, txn: ReadTransaction, contentTxn: ReadTransaction? = nil, limits: QueryLimits = QueryLimits()) throws {
        self.index = index
        self.txn = txn
        self.contentTxn = contentTxn ?? txn
        self.limits = limits
        let start = DispatchTime.now().uptimeNanoseconds
        started = start
        if let timeout = limits.timeout {
            let (seconds, attoseconds) = timeout.components
            deadline = start &+ UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds / 1_000_000_000))
        } else {
            deadline = nil
        }
        textFields = try index.textFieldNames(in: txn)
        values = try index.values.cursor(in: txn)
        postings = try index.postings.cursor(in: txn)
        runs = RunCursor(try index.runs.cursor(in: txn))
        blocks = try index.blocks.cursor(in: txn)
        var directoryReads = 0
        sources = try index.postingSources(index.statistics(in: txn), reads: &directoryReads, in: txn)
        reads += directoryReads
    }

    /// Counts `units` of work (`lookups` of them LMDB lookups), and stops
    /// the query past its work or its deadline (looked at every 256 units).
    mutating func spend(_ units: Int = 1, lookups: Int = 1) throws {
        reads += lookups
        let before = work
        work += units
        if work > limits.work {
            throw QueryLimitError(limit: .work, reached: "\(work)", allowed: "\(limits.work)")
        }
        if let deadline, before >> 8 != work >> 8 {
            let now = DispatchTime.now().uptimeNanoseconds
            if now > deadline {
                throw QueryLimitError(limit: .timeout, reached: String(format: "%.3f s", Double(now - started) / 1e9),
                                      allowed: "\(limits.timeout.map { "\($0)" } ?? "-")")
            }
        }
    }

    /// Counts one index term or attribute value a wildcard or prefix reached.
    mutating func expand() throws {
        expansions += 1
        if expansions > limits.expansions {
            throw QueryLimitError(limit: .expansions, reached: "\(expansions) so far", allowed: "\(limits.expansions)")
        }
    }

    mutating func evaluate(_ e: QueryExpression, within: Set<UInt32>?) throws -> Set<UInt32> {
        switch e {
        case .and(let l, let r):
            let left = try evaluate(l, within: within)
            return left.isEmpty ? left : try evaluate(r, within: left)
        case .or(let l, let r):
            return try evaluate(l, within: within).union(evaluate(r, within: within))
        case .compare(let name, .notEqual, let value):
            let base = try within ?? allDocuments()
            return base.subtracting(try evaluate(.compare(attribute: name, .equal, value), within: within))
        case .compare(let name, let op, .string(let pattern)):
            precondition(op == .equal, "the parser allows only == and != on strings")
            return try strings(name, pattern, within: within)
        case .compare(let name, let op, .number(let n)):
            return try numbers(name, type: "n", within: within) { QueryEvaluator.compare($0, op, n) }
        case .compare(let name, let op, .date(let d)):
            let t = d.timeIntervalSinceReferenceDate
            return try numbers(name, type: "d", within: within) { QueryEvaluator.compare($0, op, t) }
        case .inRange(let name, let low, let high):
            switch (low, high) {
            case (.number(let lo), .number(let hi)):
                return try numbers(name, type: "n", within: within) { $0 >= lo && $0 <= hi }
            case (.date(let lo), .date(let hi)):
                let a = lo.timeIntervalSinceReferenceDate, b = hi.timeIntervalSinceReferenceDate
                return try numbers(name, type: "d", within: within) { $0 >= a && $0 <= b }
            default:
                // Mixed bounds (a number and a date) match nothing.
                return []
            }
        }
    }

    static func compare(_ v: Double, _ op: ComparisonOperator, _ n: Double) -> Bool {
        switch op {
        case .equal: v == n
        case .notEqual: v != n
        case .less: v < n
        case .greater: v > n
        case .lessOrEqual: v <= n
        case .greaterOrEqual: v >= n
        }
    }

    // MARK: Numbers and dates

    /// Documents with a value of `type` in attribute `name` that satisfies `test`.
    mutating func numbers(_ name: String, type: Character, within: Set<UInt32>?,
                          _ test: (Double) -> Bool) throws -> Set<UInt32> {
        let prefix = index.scoped(AttributeKey.prefix(name: name, type: type))
        var result = Set<UInt32>()
        try spend()
        var entry = try prefix.withUnsafeBytes { try values.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.count == prefix.count + 12, e.key.starts(with: prefix) {
            let v = AttributeKey.number(fromOrderable: UnsafeRawBufferPointer(rebasing: e.key[prefix.count..<(prefix.count + 8)]))
            if test(v) {
                try AttributeBlock.forEachDocument(key: e.key, value: e.value) { id in
                    if within?.contains(id) ?? true { result.insert(id) }
                }
            }
            try spend()
            entry = try values.nextBytes()
        }
        return result
    }

    // MARK: Strings

    mutating func strings(_ name: String, _ pattern: StringPattern, within: Set<UInt32>?) throws -> Set<UInt32> {
        let candidates = try stringCandidates(name, pattern)
        let scope = within.map { candidates.intersection($0) } ?? candidates
        // Presence is exact, except for names that share field slot 7.
        if pattern.isPresenceTest && (!textFields.contains(name) || IndexField(name: name) != .other) { return scope }
        var result = Set<UInt32>()
        let nameBytes = Array(name.utf8)
        let content = index.namedContentSource(in: contentTxn)
        for id in scope.sorted() {
            try spend(QueryLimits.documentWork)
            let match = try index.withDocumentRecord(id, in: txn) { bytes in
                let (header, values) = try DocumentRecord.values(named: name, nameBytes, in: bytes, content: content)
                return QueryEvaluator.matches(header, name, values, pattern)
            }
            if match == true { result.insert(id) }
        }
        return result
    }

    /// A superset of the documents where `name` matches `pattern`.
    mutating func stringCandidates(_ name: String, _ pattern: StringPattern) throws -> Set<UInt32> {
        if pattern.isPresenceTest {
            var result: Set<UInt32>
            if name == "uniqueIdentifier" {
                // Every document answers with its identifier (never empty), but
                // those that give the name themselves (marked 'e'): they answer
                // with their values, if any.
                result = try allDocuments().subtracting(valueRange(AttributeKey.prefix(name: name, type: "e")))
                for type: Character in ["s", "n", "d"] {
                    result.formUnion(try valueRange(AttributeKey.prefix(name: name, type: type)))
                }
            } else {
                result = try valueRange(AttributeKey.prefix(name: name))
            }
            if textFields.contains(name) { result.formUnion(try documentsWithField(IndexField(name: name))) }
            return result
        }
        var result: Set<UInt32>
        // Attribute side.
        let lits = pattern.literals
        if !pattern.wordMatch && !pattern.tokenMatch && !lits[0].isEmpty {
            var key = AttributeKey.prefix(name: name, stringPrefix: lits[0])
            let whole = lits.count == 1 && key.count - AttributeKey.prefix(name: name, type: "s").count < AttributeKey.maximumStringBytes
            if whole { key.append(0) }
            result = try valueRange(key, expanding: !whole)
        } else {
            result = try valueRange(AttributeKey.prefix(name: name, type: "s"), expanding: true)
        }
        if name == "uniqueIdentifier" { result.formUnion(try identifierMatches(pattern)) }
        // Built-in names that are never text fields.
        if name == "kind" || name == "uniqueIdentifier" && !textFields.contains(name) { return result }
        // Text-field side.
        if textFields.contains(name) {
            let required = QueryEvaluator.requiredTerms(pattern)
            if required.isEmpty {
                result.formUnion(try documentsWithField(IndexField(name: name)))
            } else {
                let bit = IndexField(name: name).bit
                var words: Set<UInt32>?
                for (term, isPrefix) in required {
                    let docs = try postingDocuments(term, prefix: isPrefix, bit: bit, within: words)
                    words = docs
                    if docs.isEmpty { break }
                }
                result.formUnion(words ?? [])
            }
        }
        return result
    }

    /// Index terms that every matching field value must contain, each exact
    /// or as a prefix (see the type's documentation).
    static func requiredTerms(_ pattern: StringPattern) -> [([UInt8], Bool)] {
        var tokenizer = Tokenizer()
        if pattern.tokenMatch {
            return pattern.wordPatterns().flatMap { p in
                requiredTerms(StringPattern(literals: p.literals, modifiers: "w"))
            }
        }
        let lits = pattern.literals
        if pattern.wordMatch {
            var first = Array(lits[0].utf8)
            if first.isEmpty { return [] }
            let term = first.withUnsafeBufferPointer { tokenizer.fold($0) }
            first = term
            return first.isEmpty ? [] : [(first, lits.count > 1)]
        }
        var result: [([UInt8], Bool)] = []
        var ranges: [Range<Int>] = []
        for (i, lit) in lits.enumerated() {
            let bytes = Array(lit.utf8)
            bytes.withUnsafeBufferPointer { buffer in
                tokenizer.wordRanges(in: buffer, into: &ranges)
                for r in ranges {
                    // A word next to a `*` may continue in the field: skip it
                    // (left) or take it as a prefix (right), unless a space
                    // separates it from the star.
                    let leftOpen = i > 0 && !bytes[..<r.lowerBound].contains(where: isSpace)
                    let rightOpen = i < lits.count - 1 && !bytes[r.upperBound...].contains(where: isSpace)
                    if leftOpen { continue }
                    let term = tokenizer.fold(UnsafeBufferPointer(rebasing: buffer[r]))
                    if !term.isEmpty { result.append((term, rightOpen)) }
                }
            }
        }
        return result
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    /// Documents whose postings for `term` (or any term starting with it)
    /// have field bit `bit`.
    mutating func postingDocuments(_ term: [UInt8], prefix: Bool, bit: UInt8, within: Set<UInt32>?) throws -> Set<UInt32> {
        var result = Set<UInt32>()
        for source in sources {
            let cursor = source.isTier ? postings : blocks
            let key = source.prefix + term
            try spend()
            /// The documents of one postings value of `block` that have the field.
            func add(_ value: UnsafeRawBufferPointer, block: UInt32) throws {
                var r = ByteReader(value)
                do throws(ByteError) {
                    let count = try r.int()
                    if count > 1 { r.offset += 2 }  // the last offset
                    var offset = -1
                    for _ in 0..<count {
                        let delta = try r.int()
                        offset = offset < 0 ? delta : offset + delta
                        let mask = try r.byte()
                        for _ in 0..<mask.nonzeroBitCount { _ = try r.varint(); _ = try r.byte() }
                        if mask & bit != 0 {
                            let id = block << TextIndex.blockShift | UInt32(offset)
                            if within?.contains(id) ?? true { result.insert(id) }
                        }
                    }
                } catch {
                    throw PostingList.corrupt(error)
                }
            }
            if source.isRun {
                var entry = try key.withUnsafeBytes { try runs.seek($0) }
                while let e = entry, Searcher.hasPrefix(e.term, term), prefix || e.term.count == term.count {
                    try add(e.value, block: source.block)
                    if !prefix { break }
                    try expand()
                    try spend()
                    entry = try runs.next()
                }
                continue
            }
            var entry = try key.withUnsafeBytes { prefix ? try cursor.seekBytes(atOrAfter: $0) : try cursor.seekBytes(exactly: $0) }
            while let e = entry, e.key.starts(with: key) {
                if !source.isTier {
                    try add(e.value, block: source.block)
                } else {
                    try PostingTier.forEach(e.value) { sub, bytes in
                        try add(bytes, block: source.block << PostingTier.shift | UInt32(sub))
                    }
                }
                if !prefix { break }
                try expand()
                try spend()
                entry = try cursor.nextBytes()
            }
        }
        return result
    }

    /// Documents with a value in a text field of `field`'s slot (database
    /// `masks`, the space's range).
    mutating func documentsWithField(_ field: IndexField) throws -> Set<UInt32> {
        var result = Set<UInt32>()
        let cursor = try index.masks.cursor(in: txn)
        let space = index.spacePrefix
        try spend()
        var entry = try SpaceKey(space: index.spaceId, 0).withEncodedBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.starts(with: space) {
            let block = BigEndian.load(UInt32.self, from: e.key, at: SpaceKey.spaceByteCount)
            for (offset, mask) in e.value.enumerated() where mask & field.bit != 0 {
                result.insert(block << TextIndex.blockShift | UInt32(offset))
            }
            try spend()
            entry = try cursor.nextBytes()
        }
        return result
    }

    /// The documents whose identifier matches `pattern`, from `ids` (space,
    /// kind, 0x00, identifier → document id): the identifier of each key in
    /// the range is matched as ``matches(_:_:_:_:)`` would match it. Without
    /// modifiers the range of each kind is cut to the identifiers that start
    /// with ``identifierSeekPrefix(_:)``; with `c`, `d`, `w` or `t` every
    /// identifier of the space is matched (a folded value does not say
    /// where its unfolded forms sort).
    mutating func identifierMatches(_ pattern: StringPattern) throws -> Set<UInt32> {
        var result = Set<UInt32>()
        let seekPrefix = QueryEvaluator.identifierSeekPrefix(pattern)
        let walk = try index.idPages.walker(prefix: index.spacePrefix, in: txn)
        try spend()
        var more = try walk.first()
        while more {
            let key = walk.key
            guard let nul = key.firstIndex(of: 0) else { break }
            let identifier = key[(nul + 1)...]
            if !seekPrefix.isEmpty && !identifier.starts(with: seekPrefix) {
                // Before the prefix: to it, within this kind; past it: to the next kind
                // (kinds hold no NUL, so `kind 0x01` sorts after every key of `kind`).
                var target = Array(key[..<(nul + 1)])
                if identifier.lexicographicallyPrecedes(seekPrefix) {
                    target += seekPrefix
                } else {
                    target[nul] = 1
                }
                try spend()
                more = try walk.seek(atOrAfter: target)
                continue
            }
            if pattern.matches(String(decoding: identifier, as: UTF8.self)) {
                result.insert(try TextIndex.decodeDocumentId(walk.value))
            }
            try spend()
            more = try walk.next()
        }
        return result
    }

    /// Bytes that every identifier `pattern` matches starts with (empty:
    /// no such bound). Without modifiers a pattern compares NFC forms, and
    /// the NFC form of an identifier starts with the same ASCII bytes as
    /// the identifier up to the first `K`, `;` or `` ` ``: NFC keeps ASCII
    /// and never composes into it, and the only other scalars whose NFC is
    /// ASCII are U+212A KELVIN SIGN, U+037E GREEK QUESTION MARK and U+1FEF
    /// GREEK VARIA (checked for every scalar by the tests). So the bound is
    /// the first literal's ASCII bytes up to the first of those three.
    static func identifierSeekPrefix(_ pattern: StringPattern) -> [UInt8] {
        guard !pattern.caseInsensitive, !pattern.diacriticInsensitive, !pattern.wordMatch, !pattern.tokenMatch,
              let first = pattern.folded.first else { return [] }
        var prefix: [UInt8] = []
        for b in first {
            if b >= 0x80 || b == UInt8(ascii: "K") || b == UInt8(ascii: ";") || b == UInt8(ascii: "`") { break }
            prefix.append(b)
        }
        return prefix
    }

    /// Document ids of the space's attribute-index keys that start with
    /// `prefix` (an attribute key without the space id).
    /// `expanding`: the range is a wildcard's or a prefix's (each value it
    /// reaches counts toward ``QueryLimits/expansions``), not one value's.
    mutating func valueRange(_ prefix: [UInt8], expanding: Bool = false) throws -> Set<UInt32> {
        var result = Set<UInt32>()
        let prefix = index.scoped(prefix)
        try spend()
        var entry = try prefix.withUnsafeBytes { try values.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.starts(with: prefix) {
            try AttributeBlock.forEachDocument(key: e.key, value: e.value) { result.insert($0) }
            if expanding { try expand() }
            try spend()
            entry = try values.nextBytes()
        }
        return result
    }

    /// Whether a stored document's `name` matches `pattern`: one of its
    /// values does (`header`: the document's kind, identifier, expiration).
    static func matches(_ header: IndexDocument, _ name: String, _ values: DocumentRecord.NamedValues,
                        _ pattern: StringPattern) -> Bool {
        switch values {
        case .strings(let v): return v.contains { pattern.matches($0) }
        case .other(let n): return pattern.isPresenceTest && n > 0
        case .absent: break
        }
        switch name {
        case "kind": return pattern.matches(header.kind)
        case "uniqueIdentifier": return pattern.matches(header.identifier)
        case "expirationDate": return pattern.isPresenceTest && header.expirationDate != nil
        default: return false
        }
    }

    mutating func allDocuments() throws -> Set<UInt32> {
        if let universe { return universe }
        var result = Set<UInt32>()
        let walk = try index.idPages.walker(prefix: index.spacePrefix, in: txn)
        try spend()
        var more = try walk.first()
        while more {
            result.insert(try TextIndex.decodeDocumentId(walk.value))
            try spend()
            more = try walk.next()
        }
        universe = result
        return result
    }
}
