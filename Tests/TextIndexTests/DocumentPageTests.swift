import Foundation
import LMDB
import Testing
import TextIndex

/// Database `docs` keeps 128 documents a page, each page in chunks of
/// 4,080 bytes (one LMDB overflow page each): a document whose record is
/// cut between two chunks reads back whole, and removals leave no chunk
/// behind.
@Suite("Documents in pages")
struct DocumentPageTests {
    /// A word of letters only that no other document has, nor a prefix of
    /// one: `k`'s three digits spelled in letters.
    static func word(_ k: Int) -> String {
        "q" + String(String(1000 + k).dropFirst().map { Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(String($0))!)) })
    }

    static func document(_ k: Int) -> IndexDocument {
        // Titles of 20 to 420 bytes: records end at every offset of a chunk.
        let filler = String(repeating: "lorem ", count: (k * 37) % 70)
        return .item("doc-\(k)", title: "\(word(k)) \(filler)", attributes: ["rating": .number(Double(k))],
                     expires: k % 3 == 0 ? Date(timeIntervalSinceReferenceDate: 9e8) : nil)
    }

    static func check(_ t: TemporaryIndex, holds live: [Int]) throws {
        try t.environment.read { txn in
            for k in live {
                #expect(try t.index.document(kind: "item", identifier: "doc-\(k)", in: txn) == document(k))
                let hits = try t.index.search(word(k), now: Date(timeIntervalSinceReferenceDate: 0), in: txn)
                #expect(hits.map(\.identifier) == ["doc-\(k)"])
            }
            #expect(try t.index.documents(in: txn) == live.sorted().map(document))
        }
        // Every chunk but a page's last fills an overflow page exactly.
        let rows = try DeterminismTests.dump(t)["docs"]!
        for (i, row) in rows.enumerated() {
            let next = i + 1 < rows.count ? rows[i + 1].0 : []
            if next.count == 10 && next.starts(with: row.0.prefix(8)) { #expect(row.1.count == 4080) }
        }
    }

    @Test("records cut between chunks read back whole; removing every document leaves no key")
    func chunks() throws {
        let t = try TemporaryIndex()
        var live = Array(0..<300)
        try t.write { w in for k in live { try w.upsert(DocumentPageTests.document(k)) } }
        #expect(try DeterminismTests.dump(t)["docs"]!.contains { $0.0.count == 10 }, "some page has more than one chunk")
        try DocumentPageTests.check(t, holds: live)
        // Removals from the ends and the middle shrink pages and drop their chunks.
        var rng = SeededGenerator(seed: 7)
        while !live.isEmpty {
            let gone = Set(live.shuffled(using: &rng).prefix(70))
            try t.write { w in
                for k in gone {
                    let removed = try w.remove(kind: "item", identifier: "doc-\(k)")
                    #expect(removed)
                }
            }
            live.removeAll { gone.contains($0) }
            try DocumentPageTests.check(t, holds: live)
        }
        #expect(try DeterminismTests.dump(t)["docs"]!.isEmpty)
    }

    @Test("a page that lost a chunk is a damaged index when the space's documents are listed, not another page's bytes", arguments: [0, 1])
    func lostChunk(_ lost: Int) throws {
        let t = try TemporaryIndex()
        try t.write { w in for k in 0..<300 { try w.upsert(DocumentPageTests.document(k)) } }
        // A page of three chunks or more: losing chunk 0 leaves chunks without their page's start,
        // losing chunk 1 leaves a gap before chunk 2.
        let rows = try DeterminismTests.dump(t)["docs"]!
        let third = try #require(rows.first { $0.0.count == 10 && $0.0.suffix(2) == [0, 2] }, "a page of three chunks")
        var victim = Array(third.0.prefix(8))
        if lost > 0 { victim += [0, UInt8(lost)] }
        try t.environment.write { txn in
            let docs = try txn.openDatabase("search.docs", as: [UInt8].self, [UInt8].self)
            #expect(try docs.delete(victim, in: txn))
        }
        try t.environment.read { txn in
            _ = #expect(throws: TextIndexError.self) { try t.index.documents(in: txn) }
        }
    }

    @Test("a document removed and indexed again in one flush keeps one identity, under its new id")
    func removedAndAddedInOneFlush() throws {
        let t = try TemporaryIndex()
        try t.write { w in for k in 0..<3 { try w.upsert(DocumentPageTests.document(k)) } }
        try t.write { w in
            #expect(try w.remove(kind: "item", identifier: "doc-1"))
            try w.upsert(DocumentPageTests.document(1))
        }
        try DocumentPageTests.check(t, holds: [0, 1, 2])
    }
}
