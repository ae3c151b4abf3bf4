import Foundation
import LMDB

/// Scores the postings of a query's words block by block, with dense
/// per-block arrays (a block holds ``TextIndex/blockSize`` documents).
///
/// Pruning (max-score): a term's contribution is below its weight
/// `f · idf` (`x / (k1 + x) < 1`). With one word, its terms are taken by
/// decreasing weight, and in each block the rest are skipped once a term's
/// weight is at most the score of the `keep`-th best document so far: they
/// cannot bring a document into the top `keep`. Documents below that score
/// are dropped as found (the result says it is not complete).
///
/// It reads the postings of one space (the index's): keys `space ‖ tier ‖
/// term` (a tier's value split into its blocks' values), `space ‖ block ‖
/// term` and the pages of the runs (``RunCursor``), for the space's blocks only.
struct Searcher {
    let index: TextIndex
    let txn: ReadTransaction
    let stats: IndexStatistics
    let cursor: Cursor<[UInt8], [UInt8]>
    /// The open block's runs, page by page (``RunPage``).
    var runCursor: RunCursor
    let blockCursor: Cursor<[UInt8], [UInt8]>
    /// Sealed blocks, then the open block's runs.
    let sources: [TextIndex.PostingSource]
    /// Dense per-block state and the length factors, allocated once a
    /// search (a one-word search scores twice: the typed word, then its
    /// longer words).
    let scratch: ScoreScratch
    let blockCount: Int
    /// LMDB lookups made (see ``ReadCost``).
    var reads = 0
    /// Postings values not decoded because of their bound (see ``ReadCost``).
    var skipped = 0

    init(index: TextIndex, txn: ReadTransaction, stats: IndexStatistics) throws {
        self.index = index
        self.txn = txn
        self.stats = stats
        self.cursor = try index.postings.cursor(in: txn)
        self.runCursor = RunCursor(try index.runs.cursor(in: txn))
        self.blockCursor = try index.blocks.cursor(in: txn)
        scratch = index.scratches.take(for: stats)
        blockCount = stats.nextDocumentId == 0 ? 0 : Int((stats.nextDocumentId - 1) >> TextIndex.blockShift) + 1
        var reads = 0
        sources = try index.postingSources(stats, reads: &reads, in: txn)
        self.reads = reads
    }

    /// A query word's postings: its terms (one, or every term it is a
    /// prefix of) and, block by block, their postings values.
    struct WordPostings {
        /// Per term: `f · idf`, an upper bound of its contribution.
        var weights: [Double] = []
        var documentFrequencies: [Int] = []
        /// (term, block, value, bound) in block order; within a block, by
        /// decreasing weight once ``sortBlocks()`` ran. `bound`: the
        /// value's ``PostingBound`` (empty when it has none).
        var entries: [(term: Int32, block: Int32, bytes: UnsafeRawBufferPointer, bound: UnsafeRawBufferPointer)] = []
        /// `starts[b] ..< starts[b + 1]`: the entries of block `b`.
        var starts: [Int] = []

        var isEmpty: Bool { entries.isEmpty }
        var totalFrequency: Int { documentFrequencies.reduce(0, +) }

        /// Orders the entries by block (stably: a block's runs stay in
        /// order), and within a block by decreasing weight.
        mutating func sortBlocks(blockCount: Int) {
            starts = [Int](repeating: 0, count: blockCount + 1)
            for e in entries { starts[Int(e.block) + 1] += 1 }
            for b in 0..<blockCount { starts[b + 1] += starts[b] }
            var sorted = true
            for k in entries.indices.dropFirst() where entries[k].block < entries[k - 1].block { sorted = false; break }
            if !sorted {
                var next = starts
                let unsorted = entries
                for e in unsorted {
                    entries[next[Int(e.block)]] = e
                    next[Int(e.block)] += 1
                }
            }
            // Insertion sort of each block's few entries, in place (a
            // generic sort with a closure cost more than the entries).
            weights.withUnsafeBufferPointer { w in
                entries.withUnsafeMutableBufferPointer { e in
                    for b in 0..<blockCount where starts[b + 1] - starts[b] > 1 {
                        let lo = starts[b]
                        for i in (lo + 1)..<starts[b + 1] {
                            let x = e[i]
                            let wx = w[Int(x.term)]
                            var j = i
                            while j > lo {
                                let y = e[j - 1]
                                let wy = w[Int(y.term)]
                                guard wx > wy || (wx == wy && x.term < y.term) else { break }
                                e[j] = y
                                j -= 1
                            }
                            e[j] = x
                        }
                    }
                }
            }
        }
    }

    /// What the lookup of a typed word (``lookup(_:prefix:exactOnly:)``
    /// with `exactOnly`) saw, per source: the word's value, and whether a
    /// longer word follows it. The lookup of its longer words then seeks only
    /// the sources that have some: a rare or misspelt word has none in most.
    var typed: (term: [UInt8], values: [UnsafeRawBufferPointer?], longer: [Bool])?

    /// The postings of `term` in every block (`prefix`: of every term that
    /// starts with it; `exactOnly`: of `term` alone, noting in ``typed``
    /// where longer terms are).
    mutating func lookup(_ term: [UInt8], prefix: Bool, exactOnly: Bool = false) throws -> WordPostings {
        var found = TermsFound(term, entries: blockCount + sources.count, sources: exactOnly ? sources.count : 0)
        let known = prefix && !exactOnly && typed?.term == term ? typed : nil
        var key = SpaceKey(space: index.spaceId, capacity: 6 + term.count)
        for (n, source) in sources.enumerated() {
            if let known, !known.longer[n] {
                // No longer term here: the term's own value, if any, which
                // the typed word's lookup read.
                if let value = known.values[n] { try found.addTyped(value, source) }
                continue
            }
            // The source's key before the term, written over the previous one's.
            if key.count != source.prefixCount + term.count {
                key = source.key(then: term)
            } else {
                source.replaceParts(of: &key)
            }
            reads += 1
            if source.isRun {
                try lookupRun(key, &found, prefix: prefix, exactOnly: exactOnly, source)
            } else if !prefix {
                if let e = try key.withUnsafeBytes({ try sealedCursor(source).seekBytes(exactly: $0) }) {
                    try found.addExact(e.value, source)
                }
            } else if exactOnly {
                try lookupTyped(key, &found, source)
            } else {
                try lookupPrefix(key, &found, source)
            }
        }
        if exactOnly { typed = (term, found.values, found.longer) }
        return found.postings(idf: { idf($0) }, blockCount: blockCount)
    }

    /// The cursor on the database of `source`'s keys (not a run's).
    @inline(__always)
    func sealedCursor(_ source: TextIndex.PostingSource) -> Cursor<[UInt8], [UInt8]> { source.isTier ? cursor : blockCursor }

    /// A typed word in a sealed source: the term itself (it sorts first),
    /// then whether a longer one follows.
    mutating func lookupTyped(_ key: SpaceKey, _ found: inout TermsFound, _ source: TextIndex.PostingSource) throws {
        let cursor = sealedCursor(source)
        var entry = try key.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        var value: UnsafeRawBufferPointer?
        if let e = entry, e.key.count == key.count,
           key.withUnsafeBytes({ memcmp($0.baseAddress!, e.key.baseAddress!, $0.count) }) == 0 {
            try found.addExact(e.value, source)
            value = e.value
            reads += 1
            entry = try cursor.nextBytes()
        }
        found.values.append(value)
        if let e = entry, e.key.count > key.count, Searcher.hasPrefix(e.key, key.encoded) {
            found.longer.append(true)
        } else {
            found.longer.append(false)
        }
    }

    /// Every term that starts with the word in a sealed source.
    mutating func lookupPrefix(_ key: SpaceKey, _ found: inout TermsFound, _ source: TextIndex.PostingSource) throws {
        let cursor = sealedCursor(source)
        let keyBytes = key.encoded
        var entry = try key.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        let termStart = source.prefixCount
        while let e = entry, e.key.count >= keyBytes.count, Searcher.hasPrefix(e.key, keyBytes) {
            try found.addFound(UnsafeRawBufferPointer(rebasing: e.key[termStart...]), exact: e.key.count == keyBytes.count, e.value, source)
            reads += 1
            entry = try cursor.nextBytes()
        }
    }

    /// The word in one run: its entries are read through ``RunCursor``, not keys.
    mutating func lookupRun(_ key: SpaceKey, _ found: inout TermsFound, prefix: Bool, exactOnly: Bool,
                            _ source: TextIndex.PostingSource) throws {
        let term = found.term
        var entry = try key.withUnsafeBytes { try runCursor.seek($0) }
        if !prefix || exactOnly {
            var value: UnsafeRawBufferPointer?
            if let e = entry, e.term.count == term.count, Searcher.hasPrefix(e.term, term) {
                try found.addExact(e.value, source)
                value = e.value
                if exactOnly {
                    reads += 1
                    entry = try runCursor.next()
                }
            }
            if exactOnly {
                found.values.append(value)
                found.longer.append(entry.map { $0.term.count > term.count && Searcher.hasPrefix($0.term, term) } ?? false)
            }
            return
        }
        while let e = entry, Searcher.hasPrefix(e.term, term) {
            try found.addFound(e.term, exact: e.term.count == term.count, e.value, source)
            reads += 1
            entry = try runCursor.next()
        }
    }

    /// What a lookup found of a word: its terms, numbered (the word itself
    /// 0 when it is a term and not a prefix), their values by block, and for
    /// a typed word what each source held (``typed``).
    struct TermsFound {
        let term: [UInt8]
        var word = WordPostings()
        /// The number of the word itself among its terms; -1 when it is none.
        var exactTerm: Int32 = -1
        var ids = TermIds()
        var values: [UnsafeRawBufferPointer?] = []
        var longer: [Bool] = []

        init(_ term: [UInt8], entries: Int, sources: Int) {
            self.term = term
            // A value a source at most for one term: no regrowth of the common case.
            word.entries.reserveCapacity(entries)
            values.reserveCapacity(sources)
            longer.reserveCapacity(sources)
        }

        /// A value of term `t` from `source`: a run's, or a tier's, whose blocks become entries of their own.
        @inline(__always)
        mutating func add(_ t: Int32, _ value: UnsafeRawBufferPointer, _ source: TextIndex.PostingSource) throws {
            if !source.isTier {
                word.documentFrequencies[Int(t)] += try PostingList.count(value)
                word.entries.append((t, Int32(source.block), value, UnsafeRawBufferPointer(start: nil, count: 0)))
                return
            }
            let first = Int32(source.block << PostingTier.shift)
            var count = 0
            try PostingTier.forEachBounded(value) { sub, bytes, bound in
                count += try PostingList.count(bytes)
                word.entries.append((t, first + Int32(sub), bytes, bound))
            }
            word.documentFrequencies[Int(t)] += count
        }

        /// A new term numbered `t`.
        @inline(__always)
        mutating func numbered(_ t: Int32, isNew: Bool, exact: Bool) {
            guard isNew else { return }
            word.weights.append(0)
            word.documentFrequencies.append(0)
            if exact { exactTerm = t }
        }

        /// The term itself (term number 0 of a lookup that is not a prefix's) found in `source`.
        mutating func addExact(_ value: UnsafeRawBufferPointer, _ source: TextIndex.PostingSource) throws {
            numbered(0, isNew: word.weights.isEmpty, exact: true)
            try add(0, value, source)
        }

        /// A term a prefix found in `source` (`exact`: the prefix itself),
        /// numbered by its hash, and its value.
        @inline(__always)
        mutating func addFound(_ found: UnsafeRawBufferPointer, exact: Bool, _ value: UnsafeRawBufferPointer,
                               _ source: TextIndex.PostingSource) throws {
            let (t, isNew) = ids.id(TermTable.hash(found.bindMemory(to: UInt8.self)))
            numbered(t, isNew: isNew, exact: exact)
            try add(t, value, source)
        }

        /// The word's own value in `source`, as the typed word's lookup read it.
        mutating func addTyped(_ value: UnsafeRawBufferPointer, _ source: TextIndex.PostingSource) throws {
            let (t, isNew) = term.withUnsafeBytes { ids.id(TermTable.hash($0.bindMemory(to: UInt8.self))) }
            numbered(t, isNew: isNew, exact: true)
            try add(t, value, source)
        }

        /// The postings, each term weighed by its `idf`: longer words than
        /// typed weigh at most ``TextIndex/prefixFactor`` of the typed word
        /// when it is a word itself (what was typed is what is meant); by block.
        func postings(idf: (Int) -> Double, blockCount: Int) -> WordPostings {
            var word = word
            let exactIdf = exactTerm >= 0 ? idf(word.documentFrequencies[Int(exactTerm)]) : nil
            for t in word.weights.indices {
                let own = idf(word.documentFrequencies[t])
                word.weights[t] = t == exactTerm ? own : TextIndex.prefixFactor * min(own, exactIdf ?? own)
            }
            word.sortBlocks(blockCount: blockCount)
            return word
        }
    }

    /// Whether `bytes` starts with `prefix` (one `memcmp`, not a generic
    /// element-by-element `starts(with:)`: a prefix word compares every key
    /// of its range in every source).
    @inline(__always)
    static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
        guard bytes.count >= prefix.count else { return false }
        guard !prefix.isEmpty else { return true }
        return prefix.withUnsafeBytes { memcmp(bytes.baseAddress!, $0.baseAddress!, $0.count) } == 0
    }

    /// Terms told apart by a hash of their bytes (FNV-1a, fixed), numbered
    /// from 0 in the order first seen, in a small open-addressing table
    /// (made at the first term): no allocation per key.
    struct TermIds {
        var table: [Int32] = []
        var hashes: [UInt64] = []

        /// The number of the term with hash `h`, and whether it is new.
        @inline(__always)
        mutating func id(_ h: UInt64) -> (Int32, Bool) {
            if table.isEmpty { table = [Int32](repeating: -1, count: 1024) }
            let mask = table.count - 1
            var slot = Int(truncatingIfNeeded: h) & mask
            while table[slot] >= 0 && hashes[Int(table[slot])] != h { slot = (slot + 1) & mask }
            let found = table[slot]
            if found >= 0 { return (found, false) }
            let t = Int32(hashes.count)
            hashes.append(h)
            table[slot] = t
            if hashes.count * 2 > table.count {
                table = [Int32](repeating: -1, count: table.count * 2)
                let mask = table.count - 1
                for (i, hi) in hashes.enumerated() {
                    var s = Int(truncatingIfNeeded: hi) & mask
                    while table[s] >= 0 { s = (s + 1) & mask }
                    table[s] = Int32(i)
                }
            }
            return (t, true)
        }
    }

    /// The most a document of a value with `bound` (``PostingBound``; empty:
    /// none) can get from a term of `weight`.
    @inline(__always)
    func bound(_ bound: UnsafeRawBufferPointer, weight: Double) throws -> Double {
        guard bound.count > 0 else { return weight }
        let x = try PostingBound.maximum(bound, factor: scratch.factor)
        return min(weight, weight * x / (TextIndex.k1 + x) * Searcher.boundSlack)
    }

    /// A bound's score is raised by this factor, so that rounding in its
    /// computation (`x / (k1 + x)` is monotone in `x`, its floating-point
    /// result within an ulp or two) never puts it below a score it covers.
    static let boundSlack = 1 + 1e-9

    func idf(_ df: Int) -> Double {
        let n = Double(stats.documentCount)
        let d = Double(df)
        return log(1 + (n - d + 0.5) / (d + 0.5))
    }

    /// The documents that match all `exact` words and the `prefix` word,
    /// with their scores: all of them (`keep` = `Int.max`), or at least
    /// every one that scores as high as the `keep`-th best.
    mutating func run(exact: [[UInt8]], prefix: [UInt8], keep: Int) throws
        -> (scored: [(id: UInt32, score: Double)], complete: Bool) {
        var words: [WordPostings] = []
        for w in exact {
            let p = try lookup(w, prefix: false)
            if p.isEmpty { return ([], true) }
            words.append(p)
        }
        if words.isEmpty && keep != Int.max {
            // One word: score the word itself first. Longer words weigh at
            // most `prefixFactor` of it, so when the `keep`-th best already
            // scores that much, they cannot change the top: skip them.
            let typed = try lookup(prefix, prefix: true, exactOnly: true)
            if !typed.isEmpty {
                let cap = TextIndex.prefixFactor * typed.weights[0]
                let first = try score([typed], keep: keep)
                if let threshold = first.threshold, threshold >= cap { return (first.scored, false) }
            }
        }
        let p = try lookup(prefix, prefix: true)
        if p.isEmpty { return ([], true) }
        words.append(p)
        let result = try score(words, keep: keep)
        return (result.scored, result.complete)
    }

    /// Scores documents matching every word of `words`; see ``run(exact:prefix:keep:)``.
    /// `threshold`: the score of the `keep`-th best, when there are that many.
    mutating func score(_ words: [WordPostings], keep: Int) throws
        -> (scored: [(id: UInt32, score: Double)], complete: Bool, threshold: Double?) {
        if words.count == 1 { return try scoreOne(words[0], keep: keep) }
        // Rarest word first: it decides which documents the others may add to.
        let dfs = words.map(\.totalFrequency)
        let order = words.indices.sorted { a, b in dfs[a] != dfs[b] ? dfs[a] < dfs[b] : a < b }
        let size = TextIndex.blockSize
        var heap = TopK.Heap(capacity: keep == Int.max ? 0 : keep)
        var result: [(id: UInt32, score: Double)] = []
        result.reserveCapacity(keep == Int.max ? 256 : 4 * keep)
        var complete = true
        var candidates: [Int32] = []
        candidates.reserveCapacity(size)
        let touched = scratch.touched, matched = scratch.matched, best = scratch.best, sum = scratch.score

        // Block-max: once `keep` documents are scored, a block is skipped
        // when the sum over words of their values' best bounds
        // (``PostingBound``; a value without one: its weight) is below the
        // `keep`-th best; and once some words are scored in a block, the
        // rest of it is skipped when its best document so far plus the
        // remaining words' bounds is below it (their values are then not
        // decoded). Sums are taken in rank order, as a document's score is,
        // so that rounding cannot put a bound below a score it covers.
        let bounded = keep != Int.max
        var wordBound = [Double](repeating: 0, count: order.count)

        for block in 0..<blockCount {
            // A block where one word has no value matches nothing.
            if order.contains(where: { words[$0].starts[block] == words[$0].starts[block + 1] }) { continue }
            let checked = bounded && heap.isFull
            if checked {
                var total = 0.0
                for (rank, w) in order.enumerated() {
                    var most = 0.0
                    for k in words[w].starts[block]..<words[w].starts[block + 1] {
                        let e = words[w].entries[k]
                        most = max(most, try bound(e.bound, weight: words[w].weights[Int(e.term)]))
                    }
                    wordBound[rank] = most
                    total += most
                }
                if total < heap.threshold {
                    complete = false
                    for w in order { skipped += words[w].starts[block + 1] - words[w].starts[block] }
                    continue
                }
            }
            var alive = true
            var touchedCount = 0
            var rejected = false
            for rank in order.indices {
                touchedCount = 0
                let w = order[rank]
                let from = words[w].starts[block], to = words[w].starts[block + 1]
                for k in from..<to {
                    let e = words[w].entries[k]
                    let weight = words[w].weights[Int(e.term)]
                    try accumulate(e.bytes, weight: weight, rank: rank, floor: -Double.infinity, scratch, &touchedCount, &rejected)
                }
                if touchedCount == 0 { alive = false; break }
                let r8 = UInt8(truncatingIfNeeded: rank)
                var top = -Double.infinity
                for i in 0..<touchedCount {
                    let o = Int(touched[i])
                    if matched[o] == r8 {
                        sum[o] = rank == 0 ? best[o] : sum[o] + best[o]
                        matched[o] = r8 &+ 1
                        if sum[o] > top { top = sum[o] }
                    }
                    best[o] = 0
                }
                if rank == 0 { candidates.append(contentsOf: UnsafeBufferPointer(start: touched, count: touchedCount)) }
                if checked && rank + 1 < order.count {
                    // The block's best so far, plus what the other words can add.
                    var most = top
                    for r in (rank + 1)..<order.count { most += wordBound[r] }
                    if most < heap.threshold {
                        complete = false
                        for r in (rank + 1)..<order.count {
                            skipped += words[order[r]].starts[block + 1] - words[order[r]].starts[block]
                        }
                        alive = false
                        break
                    }
                }
            }
            if alive {
                let base = UInt32(block) << TextIndex.blockShift
                let all = UInt8(truncatingIfNeeded: order.count)
                for i in 0..<touchedCount {
                    let o = Int(touched[i])
                    guard matched[o] == all else { continue }
                    Self.offer(base | UInt32(o), sum[o], bounded: keep != Int.max,
                               heap: &heap, result: &result, complete: &complete)
                }
            }
            for o in candidates { matched[Int(o)] = 0 }
            candidates.removeAll(keepingCapacity: true)
        }
        if keep != Int.max && heap.isFull {
            let floor = heap.threshold
            let before = result.count
            result.removeAll { $0.score < floor }
            if result.count < before { complete = false }
        }
        return (result, complete, heap.isFull ? heap.threshold : nil)
    }

    /// Keeps document `id` with score `s`: every one when not `bounded`,
    /// else one that can still be among the best (`heap`); one that cannot
    /// makes the result incomplete. Both scoring loops end a block with it.
    @inline(__always)
    static func offer(_ id: UInt32, _ s: Double, bounded: Bool, heap: inout TopK.Heap,
                      result: inout [(id: UInt32, score: Double)], complete: inout Bool) {
        if !bounded {
            result.append((id, s))
        } else if !heap.isFull || s >= heap.threshold {
            heap.insert((id, s))
            result.append((id, s))
        } else {
            complete = false
        }
    }

    /// ``score(_:keep:)`` of one word: a document's score is its best
    /// term's contribution, and every document touched matches (no
    /// `matched` or `score` to keep). Only blocks that hold the word are
    /// visited; with a `keep`, best bound first (see below).
    mutating func scoreOne(_ word: WordPostings, keep: Int) throws
        -> (scored: [(id: UInt32, score: Double)], complete: Bool, threshold: Double?) {
        let bounded = keep != Int.max
        var heap = TopK.Heap(capacity: bounded ? keep : 0)
        var result: [(id: UInt32, score: Double)] = []
        result.reserveCapacity(bounded ? 4 * keep : 256)
        var complete = true
        let touched = scratch.touched, best = scratch.best
        // Block-max: every value's bound (``PostingBound``; a value without
        // one: its term's weight), and the blocks taken best bound first, so
        // that the `keep`-th best score rises early; once it is above a
        // block's bound, that block and every later one are out, and within
        // a block a value whose bound is below it is not decoded.
        var entryBounds: [Double] = []
        var visit: [Int] = []
        var visitBound: [Double] = []
        if bounded {
            entryBounds = [Double](repeating: 0, count: word.entries.count)
            var most = [Double](repeating: 0, count: blockCount)
            for k in word.entries.indices {
                let e = word.entries[k]
                let value = try bound(e.bound, weight: word.weights[Int(e.term)])
                entryBounds[k] = value
                if value > most[Int(e.block)] { most[Int(e.block)] = value }
            }
            visit = Searcher.bestFirst(most, starts: word.starts, bounds: &visitBound)
        } else {
            visit.reserveCapacity(blockCount)
            for b in 0..<blockCount where word.starts[b] < word.starts[b + 1] { visit.append(b) }
        }
        try word.entries.withUnsafeBufferPointer { entries in
            try word.weights.withUnsafeBufferPointer { weights in
                for (position, block) in visit.enumerated() {
                    if bounded && heap.isFull && visitBound[position] < heap.threshold {
                        // This block and the rest (no higher bounds) cannot reach the top.
                        if visitBound[position] > 0 { complete = false }
                        for b in visit[position...] { skipped += word.starts[b + 1] - word.starts[b] }
                        break
                    }
                    var touchedCount = 0
                    // A contribution below the `keep`-th best so far is out
                    // (and the result is then not complete).
                    let floor = heap.isFull ? heap.threshold : -Double.infinity
                    var rejected = false
                    for k in word.starts[block]..<word.starts[block + 1] {
                        let e = entries[k]
                        let weight = weights[Int(e.term)]
                        if bounded && heap.isFull {
                            // Terms by decreasing weight: the rest weigh no more.
                            if weight <= heap.threshold { complete = false; break }
                            if entryBounds[k] < heap.threshold {
                                complete = false
                                skipped += 1
                                continue
                            }
                        }
                        try accumulate(e.bytes, weight: weight, rank: 0, floor: floor, scratch, &touchedCount, &rejected)
                    }
                    if rejected { complete = false }
                    let base = UInt32(block) << TextIndex.blockShift
                    for i in 0..<touchedCount {
                        let o = Int(touched[i])
                        Self.offer(base | UInt32(o), best[o], bounded: bounded,
                                   heap: &heap, result: &result, complete: &complete)
                        best[o] = 0
                    }
                }
            }
        }
        if bounded && heap.isFull {
            let floor = heap.threshold
            let before = result.count
            result.removeAll { $0.score < floor }
            if result.count < before { complete = false }
        }
        return (result, complete, heap.isFull ? heap.threshold : nil)
    }

    /// The blocks that hold a value (`starts[b] < starts[b + 1]`), by
    /// decreasing `most[b]`, ties by block; `bounds` gets each one's bound
    /// rounded up to 28 bits of mantissa (still a bound), by which they are
    /// sorted: one integer key a block (no comparison closure).
    static func bestFirst(_ most: [Double], starts: [Int], bounds: inout [Double]) -> [Int] {
        var keys: [UInt64] = []
        keys.reserveCapacity(most.count)
        let low: UInt64 = 1 << 24 - 1
        for b in most.indices where starts[b] < starts[b + 1] {
            let bits = most[b].bitPattern
            let q = (bits >> 24) + (bits & low == 0 ? 0 : 1)
            // Decreasing q, then increasing block (< 2^20: 32-bit ids, 4,096 a block).
            keys.append((~q & (1 << 40 - 1)) << 24 | UInt64(b))
        }
        keys.sort()
        bounds = keys.map { Double(bitPattern: (~($0 >> 24) & (1 << 40 - 1)) << 24) }
        return keys.map { Int($0 & low) }
    }

    /// Per-document state of one block while a query is scored, left as
    /// found (`best` and `matched` zero) after each block; and the length
    /// factors of the query's statistics (``prepare(_:)``).
    ///
    /// A search takes one from its index's ``Pool`` and gives it back when
    /// it ends without an error (a search that threw may have left `best`
    /// or `matched` set): zeroing and touching its 36 KB anew at every
    /// search cost about 45 K of a one-word search's 300 K instructions.
    final class ScoreScratch {
        /// Sum of the words matched so far.
        let score: UnsafeMutablePointer<Double>
        /// Best contribution of the current word (0: not touched yet).
        let best: UnsafeMutablePointer<Double>
        /// How many words matched.
        let matched: UnsafeMutablePointer<UInt8>
        /// Offsets touched by the current word.
        let touched: UnsafeMutablePointer<Int32>
        /// `factor[slot * 256 + norm]`: weight / (1 − b + b · len / avglen).
        let factor: UnsafeMutablePointer<Double>

        init(size: Int) {
            score = .allocate(capacity: size)
            best = .allocate(capacity: size)
            best.initialize(repeating: 0, count: size)
            matched = .allocate(capacity: size)
            matched.initialize(repeating: 0, count: size)
            touched = .allocate(capacity: size)
            factor = .allocate(capacity: IndexField.count * 256)
        }

        /// Fills ``factor`` for `stats` (each search: the statistics change with every write).
        func prepare(_ stats: IndexStatistics) {
            FieldNorm.lengths.withUnsafeBufferPointer { lengths in
                for slot in 0..<IndexField.count {
                    let row = factor + slot * 256
                    guard stats.documentsWithField[slot] > 0 else {
                        row.initialize(repeating: 0, count: 256)
                        continue
                    }
                    let field = IndexField(slot: slot)
                    let weight = field.weight, avg = stats.averageLength(field)
                    for norm in 0..<256 {
                        row[norm] = weight / (1 - TextIndex.b + TextIndex.b * Double(lengths[norm]) / avg)
                    }
                }
            }
        }

        /// Scratches of ended searches, for the next ones (at most
        /// ``capacity``: as many as searches ran at once, recently).
        ///
        /// `@unchecked Sendable`: every access to `free` is under `lock`, and
        /// a scratch taken out belongs to that one search until given back.
        final class Pool: @unchecked Sendable {
            static let capacity = 8
            private let lock = NSLock()
            private var free: [ScoreScratch] = []

            /// A scratch whose `best` and `matched` are zero, its factors for `stats`.
            func take(for stats: IndexStatistics) -> ScoreScratch {
                let scratch = lock.withLock { free.popLast() } ?? ScoreScratch(size: TextIndex.blockSize)
                scratch.prepare(stats)
                return scratch
            }

            /// Keeps `scratch`, which a search that ended without an error used.
            func give(_ scratch: ScoreScratch) {
                lock.withLock { if free.count < Self.capacity { free.append(scratch) } }
            }
        }

        deinit {
            score.deallocate()
            best.deallocate()
            matched.deallocate()
            touched.deallocate()
            factor.deallocate()
        }
    }

    /// Decodes one postings value; for documents that matched the `rank`
    /// previous words, keeps the best contribution of this word in `best`.
    /// Contributions below `floor` (one word: the `keep`-th best score so
    /// far, which only rises) cannot reach the top; they are left out and
    /// `rejected` is set.
    @inline(__always)
    func accumulate(_ bytes: UnsafeRawBufferPointer, weight: Double, rank: Int, floor: Double,
                    _ scratch: ScoreScratch, _ touchedCount: inout Int, _ rejected: inout Bool) throws {
        guard bytes.count >= 3, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw TextIndexError.corrupt("postings value")
        }
        var p = base
        let end = base + bytes.count
        let count = try Searcher.number(&p, end)
        if count > 1 { p += 2 }  // the last offset
        var offset = -1
        let r8 = UInt8(truncatingIfNeeded: rank)
        let k1 = TextIndex.k1
        let matched = scratch.matched, best = scratch.best, touched = scratch.touched
        let factor = scratch.factor
        var n = touchedCount
        do {
            for _ in 0..<count {
                let delta = try Searcher.number(&p, end)
                offset = offset < 0 ? delta : offset + delta
                guard offset < TextIndex.blockSize, p < end else { throw TextIndexError.corrupt("posting offset") }
                let mask = p.pointee
                p += 1
                if matched[offset] != r8 {
                    // Not a candidate: skip its payload.
                    for _ in 0..<mask.nonzeroBitCount { _ = try Searcher.number(&p, end); p += 1 }
                    continue
                }
                let x = try Searcher.fieldSum(mask: mask, &p, end, factor: factor, corrupt: "posting payload")
                // Never 0: 0 in `best` means "not touched yet".
                let s = max(weight * x / (k1 + x), .leastNormalMagnitude)
                if s < floor {
                    rejected = true
                    continue
                }
                let b = best[offset]
                if b == 0 { touched[n] = Int32(offset); n += 1 }
                if s > b { best[offset] = s }
            }
        }
        touchedCount = n
    }

    /// `x = Σ_fields factor(slot, norm) · tf` of one document's payload at
    /// `p` (a varint frequency and a norm byte for each field `mask` lists,
    /// in slot order): its BM25F weight before saturation. A block's bound
    /// (``PostingBound/maximum(_:factor:)``) sums its impacts with this same
    /// code, so that it is never below a covered document's `x`, in
    /// floating point too.
    @inline(__always)
    static func fieldSum(mask: UInt8, _ p: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>,
                         factor: UnsafeMutablePointer<Double>, corrupt what: @autoclosure () -> String) throws -> Double {
        var x = 0.0
        var m = mask
        while m != 0 {
            let slot = m.trailingZeroBitCount
            m &= m - 1
            let tf = try number(&p, end)
            guard p < end else { throw TextIndexError.corrupt(what()) }
            x += Double(tf) * factor[slot &* 256 &+ Int(p.pointee)]
            p += 1
        }
        return x
    }

    /// A number of a postings value or bound at `p`: a varint
    /// (``Varint/read(_:from:end:)``) of at most 32 bits; bytes that do not
    /// read are a corrupt index.
    @inline(__always)
    static func number(_ p: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) throws -> Int {
        do throws(VarintError) {
            return Int(try Varint.read(UInt32.self, from: &p, end: end))
        } catch {
            throw TextIndexError.corrupt("postings: \(error)")
        }
    }
}
