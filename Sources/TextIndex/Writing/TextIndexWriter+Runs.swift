import Foundation
import LMDB

/// Runs of the open block: reading them back, merging them (``RunDirectory``).
extension TextIndexWriter {
    /// Every entry of the run at `prefix` (`space ‖ block ‖ start`), in
    /// term order, copied out of its pages.
    func readRun(_ prefix: [UInt8]) throws -> RunContents {
        var contents = RunContents()
        let cursor = try index.runs.cursor(in: txn)
        var entry = try prefix.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.count > prefix.count, e.key.starts(with: prefix) {
            try RunPage(e.value).append(to: &contents, pageTerm)
            entry = try cursor.nextBytes()
        }
        return contents
    }

    /// Writes `contents` (a run's entries, in term order) as the run at
    /// `prefix`, one key a page (``RunPage``); `append`: whether its keys
    /// sort after every key of `runs` (nil: look).
    func writeRun(_ prefix: [UInt8], _ contents: RunContents, append: Bool? = nil) throws {
        var key = prefix
        var page: [UInt8] = []
        var append = append
        for range in RunPage.pages(contents).ranges {
            key.removeLast(key.count - prefix.count)
            key.append(contentsOf: contents.terms[contents.term(range.lowerBound)])
            RunPage.encode(contents, range, into: &page)
            if append == nil { append = try TextIndexWriter.sortsLast(key, in: index.runs, txn) }
            try index.runs.put(page, forKey: key, flags: append! ? .append : [], in: txn)
        }
    }

    /// A term's changes in a flush: `changes[range]` of ``writePostings(_:arena:)``.
    typealias RunEdit = (termId: Int32, changes: Range<Int>)

    /// Applies `edits` (terms in byte order, each with its changes, sorted
    /// by offset) to the stored run at `prefix`: the pages that hold those
    /// terms are read, changed and written again, split as the run's whole
    /// content would be (``RunPage``). A segment of pages read grows by the
    /// next page until, changed and paged from its start, its last page
    /// ends where more entries would not move it (``RunPage/pages(_:)``'s
    /// `endsNaturally`), or at the run's end.
    func editRun(_ prefix: [UInt8], _ edits: [RunEdit], _ changes: [PostingChange], arena: [UInt8]) throws {
        let cursor = try index.runs.cursor(in: txn)
        var key: [UInt8] = []
        var scratch: [UInt8] = []
        var stored = RunContents(), edited = RunContents()
        var pageKeys: [[UInt8]] = []
        func inRun(_ key: UnsafeRawBufferPointer) -> Bool { prefix.withUnsafeBytes { RunCursor.isPage(key, of: $0) } }
        var first = 0
        while first < edits.count {
            stored.removeAll()
            pageKeys.removeAll(keepingCapacity: true)
            // The page that holds the first edit's term (nil: the run is empty).
            key.removeAll(keepingCapacity: true)
            key.append(contentsOf: prefix)
            key.append(contentsOf: table.bytes(edits[first].termId))
            var page = try key.withUnsafeBytes { try RunCursor.page(holding: $0, cursor) }
            var last = first
            while true {
                // The page, and the edits before the next page's first term.
                var next: Cursor<[UInt8], [UInt8]>.RawEntry?
                if let p = page {
                    pageKeys.append(Array(p.key))
                    try RunPage(p.value).append(to: &stored, pageTerm)
                    next = try cursor.nextBytes()
                    if let n = next, !inRun(n.key) { next = nil }
                }
                while last < edits.count, next.map({ n in
                    table.bytes(edits[last].termId).withUnsafeBytes {
                        KeyOrder.compare($0, UnsafeRawBufferPointer(rebasing: n.key[prefix.count...])) < 0
                    }
                }) ?? true {
                    last += 1
                }
                try apply(edits[first..<last], to: stored, changes, arena: arena, into: &edited, scratch: &scratch)
                // Paged from the first page read, the changed entries end a
                // page where the run did: the pages after are unchanged.
                guard let n = next, !RunPage.pages(edited).endsNaturally else { break }
                page = n
            }
            for k in pageKeys { _ = try index.runs.delete(k, in: txn) }
            try writeRun(prefix, edited, append: false)
            first = last
        }
    }

    /// `stored` (a run's entries, in term order) with `edits` merged in: a
    /// stored term's value merged with its changes (dropped when no document
    /// is left), a term not stored added; into `out`.
    func apply(_ edits: ArraySlice<RunEdit>, to stored: RunContents, _ changes: [PostingChange], arena: [UInt8],
               into out: inout RunContents, scratch value: inout [UInt8]) throws {
        out.removeAll()
        var i = 0, k = edits.startIndex
        while i < stored.count || k < edits.endIndex {
            let order: Int
            if i == stored.count {
                order = 1
            } else if k == edits.endIndex {
                order = -1
            } else {
                order = stored.terms.withUnsafeBytes { s in
                    table.bytes(edits[k].termId).withUnsafeBytes { KeyOrder.compare(UnsafeRawBufferPointer(rebasing: s[stored.term(i)]), $0) }
                }
            }
            if order < 0 {
                out.append(term: stored.terms[stored.term(i)], value: stored.values[stored.value(i)])
                i += 1
                continue
            }
            let slice = changes[edits[k].changes]
            let kept: Bool
            if order == 0 {
                kept = try stored.values.withUnsafeBytes { v in
                    try PostingList.merge(UnsafeRawBufferPointer(rebasing: v[stored.value(i)]), slice, payloads: arena, into: &value)
                }
                if kept && !value.isEmpty { out.append(term: stored.terms[stored.term(i)], value: value) }
                i += 1
            } else {
                kept = try PostingList.merge(nil, slice, payloads: arena, into: &value)
                if kept && !value.isEmpty { out.append(term: table.bytes(edits[k].termId), value: value) }
            }
            k += 1
        }
    }

    /// Every key of `db` that starts with `prefix` (terms after it, and values), in term order.
    func readRange(_ db: Database<[UInt8], [UInt8]>, _ prefix: [UInt8]) throws -> RunContents {
        var contents = RunContents()
        let cursor = try db.cursor(in: txn)
        var entry = try prefix.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.count >= prefix.count, e.key.starts(with: prefix) {
            contents.terms.append(contentsOf: UnsafeRawBufferPointer(rebasing: e.key[prefix.count...]))
            contents.termEnds.append(contents.terms.count)
            contents.values.append(contentsOf: e.value)
            contents.valueEnds.append(contents.values.count)
            entry = try cursor.nextBytes()
        }
        return contents
    }

    /// Deletes every key of database `runs` from `from` on that starts with
    /// `within` (a block's runs, or one run). `whole`: when those are all
    /// the keys of the database (the usual case with one space), it is
    /// emptied at once (`mdb_drop`), not key by key.
    func deleteRuns(from: [UInt8], within: [UInt8], whole: Bool = false) throws {
        let cursor = try index.runs.cursor(in: txn)
        if whole, let first = try cursor.firstBytes(), first.key.starts(with: within),
           let last = try cursor.lastBytes(), last.key.starts(with: within) {
            try index.runs.removeAll(in: txn)
            return
        }
        var entry = try from.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.starts(with: within) {
            try cursor.deleteCurrent()
            // After `mdb_cursor_del` the cursor stands on the next pair: MDB_NEXT returns it.
            entry = try cursor.nextBytes()
        }
    }

    /// Merges runs (in start order) term by term: `body` gets each term
    /// with its values in the runs' order, and the runs they come from.
    static func merge(_ runs: [RunContents], _ body: (ArraySlice<UInt8>, [ArraySlice<UInt8>], [Int]) throws -> Void) throws {
        var position = [Int](repeating: 0, count: runs.count)
        var values: [ArraySlice<UInt8>] = []
        var members: [Int] = []
        /// Byte order of term `a` of run `x` and term `b` of run `y`: <0, 0, >0.
        func compare(_ x: Int, _ a: Int, _ y: Int, _ b: Int) -> Int {
            let ra = runs[x].term(a), rb = runs[y].term(b)
            let n = min(ra.count, rb.count)
            let c = runs[x].terms.withUnsafeBufferPointer { pa in
                runs[y].terms.withUnsafeBufferPointer { pb in
                    n == 0 ? 0 : Int(memcmp(pa.baseAddress! + ra.lowerBound, pb.baseAddress! + rb.lowerBound, n))
                }
            }
            return c != 0 ? c : ra.count - rb.count
        }
        while true {
            members.removeAll(keepingCapacity: true)
            for r in runs.indices where position[r] < runs[r].count {
                if let m = members.first {
                    let c = compare(r, position[r], m, position[m])
                    if c < 0 {
                        members.removeAll(keepingCapacity: true)
                        members.append(r)
                    } else if c == 0 {
                        members.append(r)
                    }
                } else {
                    members.append(r)
                }
            }
            guard let first = members.first else { return }
            values.removeAll(keepingCapacity: true)
            for r in members {
                values.append(runs[r].values[runs[r].value(position[r])])
                position[r] += 1
            }
            try body(runs[first].terms[runs[first].term(position[first] - 1)], values, members)
        }
    }

    /// Seals `block`: its runs (at `starts`) and the flush's `new`
    /// documents become one value a term, in `blocks` or, when the block
    /// completes its tier, in `postings`; the runs leave `runs`.
    func seal(block: UInt32, starts: [UInt16], new: RunContents) throws {
        var contents = try starts.map { try readRun(index.runPrefix(block: block, start: $0)) }
        contents.append(new)
        let blockPrefix = index.postingKey(block: block, term: EmptyCollection())
        try deleteRuns(from: blockPrefix, within: blockPrefix, whole: true)
        var sealed = RunContents()
        var out: [UInt8] = []
        try TextIndexWriter.merge(contents) { term, values, _ in
            try PostingList.concatenate(values, into: &out)
            guard !out.isEmpty else { return }
            sealed.append(term: term, value: out)
        }
        try writeSealedBlock(block, sealed)
    }

    /// Writes the postings of a newly sealed `block` (term order). The first
    /// three blocks of a tier go to `blocks` (`space ‖ block ‖ term`, the
    /// newest keys of the space there, `MDB_APPEND` when it is the last);
    /// the fourth completes the tier: the three are read back and leave
    /// `blocks` (at once with `mdb_drop` when it holds nothing else), and
    /// the tier is written to `postings` in key order, one value a term
    /// (``PostingTier``), so that its pages are full.
    func writeSealedBlock(_ block: UInt32, _ new: RunContents) throws {
        let sub = Int(block & UInt32(PostingTier.blocks - 1))
        var out: [UInt8] = []
        var append: Bool?
        guard sub == PostingTier.blocks - 1 else {
            let prefix = index.postingKey(block: block, term: EmptyCollection())
            var key = prefix
            for b in 0..<new.count {
                key.removeLast(key.count - prefix.count)
                key.append(contentsOf: new.terms[new.term(b)])
                if append == nil { append = try TextIndexWriter.sortsLast(key, in: index.blocks, txn) }
                try index.blocks.put(Array(new.values[new.value(b)]), forKey: key, flags: append! ? .append : [], in: txn)
            }
            return
        }
        let first = block - UInt32(sub)
        var contents = try (first..<block).map { try readRange(index.blocks, index.postingKey(block: $0, term: EmptyCollection())) }
        contents.append(new)
        // The space's keys in `blocks` are those three blocks' alone.
        let space = index.spacePrefix
        let cursor = try index.blocks.cursor(in: txn)
        if let f = try cursor.firstBytes(), f.key.starts(with: space), let l = try cursor.lastBytes(), l.key.starts(with: space) {
            try index.blocks.removeAll(in: txn)
        } else {
            try index.blocks.removeAll(withPrefix: space, in: txn)
        }
        let prefix = index.postingKey(block: block >> PostingTier.shift, term: EmptyCollection())
        var key = prefix
        var parts: [(Int, ArraySlice<UInt8>)] = []
        try TextIndexWriter.merge(contents) { term, values, members in
            parts.removeAll(keepingCapacity: true)
            for (value, member) in zip(values, members) where !value.isEmpty { parts.append((member, value)) }
            guard !parts.isEmpty else { return }
            try PostingTier.encode(parts, into: &out)
            key.removeLast(key.count - prefix.count)
            key.append(contentsOf: term)
            if append == nil { append = try TextIndexWriter.sortsLast(key, in: index.postings, txn) }
            try index.postings.put(out, forKey: key, flags: append! ? .append : [], in: txn)
        }
    }

    /// Whether `key` sorts after every key of `db` (`MDB_LAST`): then keys
    /// written in increasing order from it may use `MDB_APPEND`, which fills
    /// pages instead of splitting them in half.
    static func sortsLast<K: LMDBCodable, V: LMDBCodable>(_ key: K, in db: Database<K, V>, _ txn: WriteTransaction) throws -> Bool {
        let cursor = try db.cursor(in: txn)
        guard let last = try cursor.lastBytes() else { return true }
        return key.withEncodedBytes { last.key.lexicographicallyPrecedes($0) }
    }
}

/// What a flush makes of the runs of the block that is open after it.
struct RunPlan {
    enum Content: Equatable {
        /// A run of an earlier flush, left as it is.
        case stored
        /// New documents only: written once, here.
        case new
        /// Runs of earlier flushes (their starts), merged with new documents (if any).
        case merged([UInt16])
    }

    struct Run {
        var start: UInt16
        var level: UInt8
        var content: Content
    }

    var runs: [Run]

    /// The runs after appending, one by one, a run for each group of new
    /// documents (`groupStarts`, offsets in the block, increasing; `fill`:
    /// the block's fill after the last), merging by the directory's policy
    /// after each, as flushes at each group's end would.
    init(stored: [RunDirectory.Run], groupStarts: [UInt16], fill: Int) {
        runs = stored.map { Run(start: $0.start, level: $0.level, content: .stored) }
        for (g, start) in groupStarts.enumerated() {
            runs.append(Run(start: start, level: 0, content: .new))
            let end = g + 1 < groupStarts.count ? Int(groupStarts[g + 1]) : fill
            while let due = RunDirectory.dueMerge(runs.map { ($0.start, $0.level) }, fill: end) {
                let members = runs[due]
                var storedStarts: [UInt16] = []
                for m in members {
                    switch m.content {
                    case .stored: storedStarts.append(m.start)
                    case .new: break
                    case .merged(let s): storedStarts.append(contentsOf: s)
                    }
                }
                let merged = Run(start: members.first!.start, level: members.first!.level + 1,
                                 content: storedStarts.isEmpty ? .new : .merged(storedStarts))
                runs.replaceSubrange(due, with: [merged])
            }
        }
    }

    /// The index of the run that holds `offset`.
    func run(containing offset: UInt16) -> Int {
        var found = 0
        for (i, run) in runs.enumerated() where run.start <= offset { found = i }
        return found
    }
}

extension TextIndexWriter {
    /// Writes a flush's posting changes (sorted by block, term, offset):
    ///
    /// - a sealed block (every id allocated before this flush): each
    ///   (block, term) value (in `blocks`, or its part of the (tier, term)
    ///   value in `postings`) is read, merged with its changes and written once;
    /// - the open block's documents from earlier flushes: the same, in the
    ///   run that holds the document's offset;
    /// - new documents (ids from ``flushedNextId``): a block they fill is
    ///   written sealed at once when it has no runs, or sealed with its
    ///   runs; in the block left open, each group of them (``endGroup()``;
    ///   the flush ends the last) makes a run, and runs due are merged
    ///   (``RunPlan``), each posting written once.
    ///
    /// The steps are ``PostingPass``'s.
    func writePostings(_ changes: [PostingChange], arena: [UInt8]) throws {
        // 1. The blocks before and after the flush, and the plan of the block left open.
        var pass = try PostingPass(self, changes, arena: arena)
        // 2. Each (block, term)'s changes, in key order: written, or gathered by run.
        var i = 0
        while i < changes.count {
            let j = pass.endOfGroup(from: i)
            try pass.write(i..<j)
            i = j
        }
        // 3. What was gathered, then the run directory.
        try pass.finish()
    }
}
