import Foundation
import LMDB
import Testing
import TextIndex

/// The whole shared corpus (73,443 items) indexed in batches of 500, one
/// write transaction each; every one of the 400 queries finds something.
@Suite("Corpus", .serialized)
struct CorpusTests {
    static func document(_ item: CorpusItem) -> IndexDocument {
        IndexDocument(kind: "item", identifier: item.uniqueIdentifier,
                      fields: ["title": [item.title], "displayName": [item.displayName],
                               "contentDescription": [item.contentDescription], "keywords": item.keywords],
                      attributes: ["domainIdentifier": .string(item.domainIdentifier)])
    }

    @Test func wholeCorpusIndexesAndEveryQueryFindsSomething() throws {
        let items = try CorpusFixture.items()
        #expect(items.count == 73_443)
        let t = try TemporaryIndex(durability: .noSync)
        var start = 0
        while start < items.count {
            let batch = items[start..<min(start + 500, items.count)]
            try t.write { w in
                for item in batch { try w.upsert(CorpusTests.document(item)) }
            }
            start += 500
        }
        let stats = try t.environment.read { try t.index.statistics(in: $0) }
        #expect(stats.documentCount == UInt64(Set(items.map(\.uniqueIdentifier)).count))

        let queries = try CorpusFixture.queries()
        #expect(queries.count == 400)
        var empty: [String] = []
        for q in queries where try t.search(q).isEmpty { empty.append(q) }
        #expect(empty.isEmpty, "queries without hits: \(empty)")

        // Pruned top 20 (18 blocks here, so pruning happens) equals the head
        // of the full ranking.
        for q in queries.enumerated().filter({ $0.offset % 8 == 0 }).map(\.element) {
            let top = try t.search(q, limit: 20)
            let all = try t.search(q, limit: 1_000_000)
            #expect(top == Array(all.prefix(20)), "\(q)")
        }

        // The multilingual part of the corpus is findable too.
        #expect(try !t.search("ゲーム").isEmpty)
        #expect(try !t.search("游戏").isEmpty)
        #expect(try !t.search("juego").isEmpty)
        #expect(try !t.query(#"domainIdentifier == "games" && title == "0ad""#).isEmpty)
    }
}
