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
        var cost = ReadCost()
        return try search(text, now: now, limit: limit, cost: &cost, in: txn)
    }

    /// ``search(_:now:limit:in:)``, adding to `cost` the LMDB lookups it made.
    public func search(_ text: String, now: Date, limit: Int = 20, cost: inout ReadCost,
                       in txn: ReadTransaction) throws -> [SearchHit] {
        guard limit > 0 else { return [] }
        var tokenizer = Tokenizer()
        var words = tokenizer.terms(text).map { Array($0.utf8) }
        guard !words.isEmpty else { return [] }
        // A repeated non-last word adds nothing but double counting.
        var seen = Set<[UInt8]>()
        let last = words.removeLast()
        words = words.filter { seen.insert($0).inserted }
        let stats = try statistics(in: txn)
        cost.keys += 1
        guard stats.documentCount > 0 else { return [] }
        var searcher = try Searcher(index: self, txn: txn, stats: stats)
        defer {
            cost.keys += searcher.reads
            cost.skippedValues += searcher.skipped
        }
        // First keep only what can reach the top `limit`; when expired
        // documents push the answer below that, search again keeping all.
        let pruned = try searcher.run(exact: words, prefix: last, keep: limit)
        let hits: [SearchHit]
        if let found = try rank(pruned.scored, complete: pruned.complete, now: now, limit: limit,
                                reads: &searcher.reads, in: txn) {
            hits = found
        } else {
            let all = try searcher.run(exact: words, prefix: last, keep: Int.max)
            hits = try rank(all.scored, complete: true, now: now, limit: limit, reads: &searcher.reads, in: txn) ?? []
        }
        // Only now: a search that threw may have left the scratch's arrays set.
        scratches.give(searcher.scratch)
        return hits
    }

    /// Orders scored documents, drops the expired, breaks ties by identifier.
    /// Nil when `scored` is not `complete` and the answer needs more of it.
    /// `reads`: incremented per document read.
    func rank(_ scored: [(id: UInt32, score: Double)], complete: Bool, now: Date, limit: Int,
              reads: inout Int, in txn: ReadTransaction) throws -> [SearchHit]? {
        var k = limit
        while true {
            // The k best by (score, id); then everything tied with the k-th.
            let top = TopK.select(scored, k)
            guard let floor = top.last?.score else { return [] }
            let group = top.count < k ? top : scored.filter { $0.score >= floor }
            // The group's documents through one cursor, keys written in
            // place; kind and identifier as bytes in the map (the read
            // transaction keeps them), strings made for the returned hits only.
            var found: [FoundHit] = []
            found.reserveCapacity(group.count)
            let cursor = try docs.cursor(in: txn)
            // Keeps records cut between chunks as long as `found` points into them.
            let arena = DocumentChunks.Arena()
            defer { withExtendedLifetime(arena) {} }
            let nowSeconds = now.timeIntervalSinceReferenceDate
            for c in group {
                reads += 1
                guard let record = try DocumentChunks.record(c.id, space: spaceId, cursor: cursor, arena: arena) else { continue }
                let doc = try DocumentRecord.decodeHitBytes(record)
                found.append(FoundHit(score: c.score, kind: doc.kind, identifier: doc.identifier,
                                      expired: doc.expiration.map { $0 <= nowSeconds } ?? false))
            }
            // Best first, ties by identifier, then kind (UTF-8 bytes, as
            // ``utf8Less(_:_:)``): a total order, so an insertion sort of
            // the few found gives what a stable sort would. Many documents
            // tied at the floor (a word with the same tf in same-length
            // fields) would make it quadratic: those take the library sort.
            var order = Array(found.indices)
            found.withUnsafeBufferPointer { f in
                guard f.count <= 64 else {
                    order.sort { TextIndex.hitPrecedes(f[$0], f[$1]) }
                    return
                }
                order.withUnsafeMutableBufferPointer { o in
                    for i in o.indices.dropFirst() {
                        let x = o[i]
                        var j = i
                        while j > 0 && TextIndex.hitPrecedes(f[x], f[o[j - 1]]) {
                            o[j] = o[j - 1]
                            j -= 1
                        }
                        o[j] = x
                    }
                }
            }
            var live: [SearchHit] = []
            live.reserveCapacity(min(limit, found.count))
            var liveCount = 0
            for i in order where !found[i].expired {
                liveCount += 1
                if live.count < limit {
                    let h = found[i]
                    live.append(SearchHit(kind: String(decoding: h.kind, as: UTF8.self),
                                          identifier: String(decoding: h.identifier, as: UTF8.self), score: h.score))
                }
            }
            if liveCount >= limit || group.count >= scored.count {
                if liveCount < limit && !complete { return nil }
                return live
            }
            if !complete { return nil }
            k = k * 2 + (found.count - liveCount)
        }
    }

    /// A scored document read for ranking: kind and identifier as UTF-8
    /// bytes in the map (valid while the read transaction is).
    struct FoundHit {
        var score: Double
        var kind: UnsafeRawBufferPointer
        var identifier: UnsafeRawBufferPointer
        var expired: Bool
    }

    /// Whether a found hit ranks before another: higher score, then
    /// identifier, then kind, by UTF-8 bytes.
    @inline(__always)
    static func hitPrecedes(_ a: FoundHit, _ b: FoundHit) -> Bool {
        if a.score != b.score { return a.score > b.score }
        let c = KeyOrder.compare(a.identifier, b.identifier)
        if c != 0 { return c < 0 }
        return KeyOrder.compare(a.kind, b.kind) < 0
    }
}
