import Foundation
import LMDB
import Testing
import TextIndex

/// A ranked search skips the postings values whose score bound is below the
/// `limit`-th best it has found (block-max pruning). Skipping must never
/// lose a hit: the pruned top equals the head of the full ranking, which a
/// search with no effective limit computes from every posting (its heap
/// never fills, so nothing is skipped), ties at the cut included.
@Suite("Block-max bounds")
struct BlockBoundTests {
    static let now = TemporaryIndex.now

    /// Document `i` of a skewed corpus: most documents have `alpha` once in a
    /// long description (weak); a few blocks hold the strong ones (a short
    /// title), some with identical fields (tied scores), some expired.
    static func document(_ i: Int) -> IndexDocument {
        let block = i / 4_096
        let filler = (0..<(8 + i % 23)).map { "w\(($0 * 7 + i) % 300)" }.joined(separator: " ")
        var doc = IndexDocument.item(String(format: "d%06d", i), title: "t\(i % 1_000) common",
                                     ["contentDescription": ["alpha \(filler)"]])
        doc.expirationDate = now.addingTimeInterval(3_600)
        if block == 1 || block == 6 {
            switch i % 97 {
            case 0:                                                           // tied, strong
                doc.fields = ["title": ["alpha beta"]]
            case 1: doc.fields["title"] = ["alpha alpha beta \(filler)"]      // strong, longer
            case 2: doc.fields["keywords"] = ["alphabet", "gamma"]            // a longer term (prefix)
            case 3:
                doc.fields["title"] = ["alpha beta"]
                doc.expirationDate = now.addingTimeInterval(-60)              // expired: left out
            default: break
            }
        } else if i % 601 == 0 {
            doc.fields["contentDescription"] = ["alpha alpha beta \(filler)"] // medium
        }
        return doc
    }

    static let searches = ["alpha", "alp", "alpha beta", "beta alp", "gamma", "beta", "common alpha", "alphabet"]

    /// Every search at several limits against the head of its full ranking;
    /// returns how many postings values the limited searches skipped.
    static func check(_ t: TemporaryIndex, round: String, searches: [String] = searches) throws -> Int {
        var skipped = 0
        for q in searches {
            let full = try t.search(q, now: now, limit: 1_000_000)
            #expect(full.count > 20, "\(q) \(round)")
            for limit in [1, 5, 20, 37] {
                var cost = ReadCost()
                let top = try t.environment.read { txn in
                    try t.index.search(q, now: now, limit: limit, cost: &cost, in: txn)
                }
                skipped += cost.skippedValues
                #expect(top == Array(full.prefix(limit)), "search \(q) limit \(limit), \(round)")
            }
        }
        return skipped
    }

    @Test("a search skips blocks whose bound is below its top, and finds what a search of every posting finds")
    func prunedEqualsFull() throws {
        // Ten blocks: tiers 0 and 1 complete (bounds), blocks 8 and 9 sealed alone and open.
        let count = 9 * 4_096 + 500
        let t = try TemporaryIndex()
        for batch in stride(from: 0, to: count, by: 5_000) {
            try t.write { w in for i in batch..<min(batch + 5_000, count) { try w.upsert(BlockBoundTests.document(i)) } }
        }
        #expect(try RunTests.sealedBlocks(t) == Set(0..<9))
        #expect(try BlockBoundTests.check(t, round: "built") > 0)
        // Several words: blocks (or their remaining words) skipped by the
        // sum of bounds, and still the head of the full ranking.
        #expect(try BlockBoundTests.check(t, round: "built, several words", searches: ["common alpha", "alpha common", "beta alp"]) > 0)

        // A rebuild of the same documents in one flush writes the same bounds.
        let fresh = try TemporaryIndex()
        try fresh.write { w in for i in 0..<count { try w.upsert(BlockBoundTests.document(i)) } }
        let (a, b) = (try DeterminismTests.dump(fresh), try DeterminismTests.dump(t))
        #expect(a["postings"]!.elementsEqual(b["postings"]!) { $0.0 == $1.0 && $0.1 == $1.1 })

        // Strong documents made weak and weak ones strong inside sealed
        // tiers: each changed block's bound is computed again, or the new
        // strong documents (in blocks that had none) would be skipped.
        try t.write { w in
            for i in stride(from: 4_096, to: 2 * 4_096, by: 97) {
                try w.upsert(.item(String(format: "d%06d", i), title: "t common", ["contentDescription": ["alpha x y z"]]))
            }
            for i in stride(from: 3 * 4_096 + 11, to: 8 * 4_096, by: 1_013) {
                try w.upsert(.item(String(format: "d%06d", i), title: "alpha beta", ["keywords": ["alphabet"]]))
            }
        }
        #expect(try BlockBoundTests.check(t, round: "changed") > 0)
    }
}
