import Foundation
import LMDB

/// Free-text search: every query word must match a word of the document,
/// the last one also as a prefix; ranked by BM25F.
extension TextIndex {
    /// BM25 saturation.
    static let k1 = 1.2
    /// BM25 length normalization.
    static let b = 0.75
    /// A last-word match that is a longer word than typed counts this much of
    /// an exact match, so that `open` ranks `open` above `openssl`.
    static let prefixFactor = 0.5

    /// The documents matching every word of `text` (the last also as a
    /// prefix), not expired at `now`, best first, ties by identifier (then
    /// kind), at most `limit`.
    ///
    /// ```swift
    /// try index.search("introduccion spot", now: now, in: txn)   // finds "Introducción … Spotlight"
    /// ```
    ///
    /// Score: for each query word, the best of its matching terms of
    /// `idf · t / (k1 + t)` with `t = Σ_fields weight · tf / (1 − b + b · len / avglen)`
    /// (BM25F; weights in ``IndexField``), summed over the query words.
    public func search(_ text: String, now: Date, limit: Int = 20, in txn: ReadTransaction) throws -> [SearchHit] {
        guard limit > 0 else { return [] }
        var tokenizer = Tokenizer()
        var words = tokenizer.terms(text).map { Array($0.utf8) }
        guard !words.isEmpty else { return [] }
        // A repeated non-last word adds nothing but double counting.
        var seen = Set<[UInt8]>()
        let last = words.removeLast()
        words = words.filter { seen.insert($0).inserted }
        let stats = try statistics(in: txn)
        guard stats.documentCount > 0 else { return [] }
        var searcher = try Searcher(index: self, txn: txn, stats: stats)
        let candidates = try searcher.run(exact: words, prefix: last)
        return try rank(candidates, now: now, limit: limit, in: txn)
    }

    /// Orders scored documents, drops the expired, breaks ties by identifier.
    func rank(_ scored: [(id: UInt32, score: Double)], now: Date, limit: Int, in txn: ReadTransaction) throws -> [SearchHit] {
        var k = limit
        while true {
            // The k best by (score, id); then everything tied with the k-th.
            let top = TopK.select(scored, k)
            guard let floor = top.last?.score else { return [] }
            var group = scored.filter { $0.score >= floor }
            if group.count > 4 * k + 64 { group = top }  // cannot happen with exact ties only; keeps it bounded
            var hits: [(hit: SearchHit, expired: Bool)] = []
            hits.reserveCapacity(group.count)
            for c in group {
                guard let doc = try docs.withValue(forKey: UInt32Key(c.id), in: txn, { try DocumentRecord.decodeHeader($0) })
                else { continue }
                hits.append((SearchHit(kind: doc.kind, identifier: doc.identifier, score: c.score), doc.isExpired(at: now)))
            }
            hits.sort { a, b in
                if a.hit.score != b.hit.score { return a.hit.score > b.hit.score }
                if a.hit.identifier != b.hit.identifier { return utf8Less(a.hit.identifier, b.hit.identifier) }
                return utf8Less(a.hit.kind, b.hit.kind)
            }
            let live = hits.filter { !$0.expired }.map(\.hit)
            if live.count >= limit || group.count >= scored.count {
                return Array(live.prefix(limit))
            }
            k = k * 2 + (hits.count - live.count)
        }
    }
}

/// Scores the postings of a query's words block by block, with dense
/// per-block arrays (a block holds ``TextIndex/blockSize`` documents).
struct Searcher {
    let index: TextIndex
    let txn: ReadTransaction
    let stats: IndexStatistics
    let cursor: Cursor<[UInt8], [UInt8]>
    /// `factor[slot * 256 + norm]`: weight / (1 − b + b · len / avglen).
    var factor: [Double]
    let blockCount: Int

    init(index: TextIndex, txn: ReadTransaction, stats: IndexStatistics) throws {
        self.index = index
        self.txn = txn
        self.stats = stats
        self.cursor = try index.postings.cursor(in: txn)
        factor = [Double](repeating: 0, count: IndexField.count * 256)
        for slot in 0..<IndexField.count {
            let field = IndexField(slot: slot)
            let avg = stats.averageLength(field)
            for norm in 0..<256 {
                let len = Double(FieldNorm.length(UInt8(norm)))
                factor[slot * 256 + norm] = field.weight / (1 - TextIndex.b + TextIndex.b * len / avg)
            }
        }
        blockCount = stats.nextDocumentId == 0 ? 0 : Int((stats.nextDocumentId - 1) >> TextIndex.blockShift) + 1
    }

    /// One term's postings in each block where it occurs.
    struct TermPostings {
        var exact: Bool
        var documentFrequency = 0
        var blocks: [(block: Int, bytes: UnsafeRawBufferPointer)] = []
    }

    /// The postings of `term` in every block (`prefix`: of every term that
    /// starts with it, grouped by term).
    mutating func lookup(_ term: [UInt8], prefix: Bool) throws -> [TermPostings] {
        var byTerm: [[UInt8]: TermPostings] = [:]
        var single = TermPostings(exact: true)
        for block in 0..<blockCount {
            let key = TextIndex.postingKey(block: UInt32(block), term: term)
            if !prefix {
                if let e = try key.withUnsafeBytes({ try cursor.seekBytes(exactly: $0) }) {
                    single.documentFrequency += try PostingList.count(e.value)
                    single.blocks.append((block, e.value))
                }
                continue
            }
            var entry = try key.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
            while let e = entry, e.key.count >= key.count, e.key.starts(with: key) {
                let suffix = [UInt8](e.key[4...])
                var p = byTerm[suffix] ?? TermPostings(exact: e.key.count == key.count)
                p.documentFrequency += try PostingList.count(e.value)
                p.blocks.append((block, e.value))
                byTerm[suffix] = p
                entry = try cursor.nextBytes()
            }
        }
        if !prefix { return single.blocks.isEmpty ? [] : [single] }
        // Sorted by term, so that floating-point sums happen in one order.
        return byTerm.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { byTerm[$0]! }
    }

    func idf(_ df: Int) -> Double {
        let n = Double(stats.documentCount)
        let d = Double(df)
        return log(1 + (n - d + 0.5) / (d + 0.5))
    }

    /// Every document that matches all `exact` words and the `prefix` word,
    /// with its score.
    mutating func run(exact: [[UInt8]], prefix: [UInt8]) throws -> [(id: UInt32, score: Double)] {
        var words: [[TermPostings]] = []
        for w in exact {
            let p = try lookup(w, prefix: false)
            if p.isEmpty { return [] }
            words.append(p)
        }
        let p = try lookup(prefix, prefix: true)
        if p.isEmpty { return [] }
        words.append(p)
        // Rarest word first: it decides which documents the others may add to.
        let order = words.indices.sorted { a, b in
            let da = words[a].reduce(0) { $0 + $1.documentFrequency }
            let db = words[b].reduce(0) { $0 + $1.documentFrequency }
            return da != db ? da < db : a < b
        }
        let size = TextIndex.blockSize
        var score = [Double](repeating: 0, count: size)
        var matched = [UInt8](repeating: 0, count: size)
        var best = [Double](repeating: 0, count: size)
        var touched: [Int] = []
        touched.reserveCapacity(size)
        var result: [(id: UInt32, score: Double)] = []
        // Per word, per term: the cursor into its blocks list.
        var next = words.map { [Int](repeating: 0, count: $0.count) }
        let idfs = words.map { $0.map { idf($0.documentFrequency) * ($0.exact ? 1 : TextIndex.prefixFactor) } }

        for block in 0..<blockCount {
            var alive = true
            for (rank, w) in order.enumerated() {
                touched.removeAll(keepingCapacity: true)
                for t in words[w].indices {
                    let i = next[w][t]
                    guard i < words[w][t].blocks.count, words[w][t].blocks[i].block == block else { continue }
                    next[w][t] = i + 1
                    try accumulate(words[w][t].blocks[i].bytes, idf: idfs[w][t], rank: rank,
                                   matched: &matched, best: &best, touched: &touched)
                }
                if touched.isEmpty { alive = false; break }
                for o in touched {
                    if matched[o] == UInt8(truncatingIfNeeded: rank) {
                        score[o] = rank == 0 ? best[o] : score[o] + best[o]
                        matched[o] = UInt8(truncatingIfNeeded: rank + 1)
                    }
                    best[o] = 0
                }
            }
            if alive {
                let base = UInt32(block) << TextIndex.blockShift
                for o in touched where Int(matched[o]) == order.count {
                    result.append((base | UInt32(o), score[o]))
                }
            }
            // Skip the remaining terms' postings of this block.
            for w in words.indices {
                for t in words[w].indices {
                    let i = next[w][t]
                    if i < words[w][t].blocks.count, words[w][t].blocks[i].block == block { next[w][t] = i + 1 }
                }
            }
            for i in 0..<size { matched[i] = 0 }
        }
        return result
    }

    /// Decodes one postings value; for documents that matched the `rank`
    /// previous words, keeps the best contribution of this word in `best`.
    @inline(__always)
    func accumulate(_ bytes: UnsafeRawBufferPointer, idf: Double, rank: Int,
                    matched: inout [UInt8], best: inout [Double], touched: inout [Int]) throws {
        var r = ByteReader(bytes)
        let count = try r.int()
        r.offset += 2  // the last offset
        var offset = -1
        let r8 = UInt8(truncatingIfNeeded: rank)
        try factor.withUnsafeBufferPointer { factor in
            for _ in 0..<count {
                let delta = try r.int()
                offset = offset < 0 ? delta : offset + delta
                guard offset < TextIndex.blockSize else { throw TextIndexError.corrupt("posting offset") }
                let mask = try r.byte()
                if matched[offset] != r8 {
                    // Not a candidate: skip its payload.
                    for _ in 0..<mask.nonzeroBitCount { _ = try r.varint(); _ = try r.byte() }
                    continue
                }
                var t = 0.0
                var m = mask
                while m != 0 {
                    let slot = m.trailingZeroBitCount
                    m &= m - 1
                    let tf = Double(try r.varint())
                    let norm = Int(try r.byte())
                    t += tf * factor[slot &* 256 &+ norm]
                }
                // Never 0: 0 in `best` means "not touched yet".
                let s = max(idf * t / (TextIndex.k1 + t), .leastNormalMagnitude)
                if best[offset] == 0 { touched.append(offset) }
                if s > best[offset] { best[offset] = s }
            }
        }
    }
}

/// Selection of the k best (score descending, id ascending) without sorting everything.
enum TopK {
    static func select(_ items: [(id: UInt32, score: Double)], _ k: Int) -> [(id: UInt32, score: Double)] {
        if items.count <= k {
            return items.sorted(by: better)
        }
        // A min-heap of the k best so far (root: the worst of them).
        var heap: [(id: UInt32, score: Double)] = []
        heap.reserveCapacity(k)
        for item in items {
            if heap.count < k {
                heap.append(item)
                var i = heap.count - 1
                while i > 0 {
                    let p = (i - 1) / 2
                    if better(heap[p], heap[i]) { heap.swapAt(p, i); i = p } else { break }
                }
            } else if better(item, heap[0]) {
                heap[0] = item
                var i = 0
                while true {
                    let l = 2 * i + 1, r = l + 1
                    var worst = i
                    if l < k && better(heap[worst], heap[l]) { worst = l }
                    if r < k && better(heap[worst], heap[r]) { worst = r }
                    if worst == i { break }
                    heap.swapAt(i, worst)
                    i = worst
                }
            }
        }
        return heap.sorted(by: better)
    }

    @inline(__always)
    static func better(_ a: (id: UInt32, score: Double), _ b: (id: UInt32, score: Double)) -> Bool {
        a.score != b.score ? a.score > b.score : a.id < b.id
    }
}
