import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

@Suite("Indexing with documents tokenized ahead of the write")
struct PreparedIndexingTests {
    static let words = ["Oat", "latte", "Introducción", "indexación", "アプリの状態", "索引应用", "गतिविधि", "Spotlight",
                        "NSUserActivity", "game::strategy", "kdiff3", "naïve", "café", "ÉCOLE", "straße"]

    /// A replaced item with text that depends on `n` and `variant`.
    static func item(_ n: Int, variant: Int = 0) -> SearchableItem {
        makeItem("item-\(n)", domain: n % 3 == 0 ? "orders.2024" : "orders", title: "\(words[(n + variant) % words.count]) \(n)",
                 keywords: n % 2 == 0 ? [words[n % words.count], words[(n + 3) % words.count]] : []) { item in
            item.attributeSet.contentDescription = (0..<(n % 7 + variant)).map { words[($0 * 5 + n) % words.count] }.joined(separator: " ")
            if n % 4 == 0 { item.attributeSet.displayName = "Display \(words[(n + 1) % words.count])" }
        }
    }

    /// The same commands on a store that prepares documents ahead and on one that does not.
    static func workload(_ store: ActivityStore) throws {
        try store.indexSearchableItems((0..<300).map { item($0) }, at: at(1))
        // Replacements with other text, a merge, an identifier twice in one batch.
        var update = SearchableItem(uniqueIdentifier: "item-5")
        update.isUpdate = true
        update.attributeSet.title = "merged café"
        try store.indexSearchableItems((0..<120).map { item($0 * 2, variant: 1) } + [update, item(7, variant: 2), item(7, variant: 3)],
                                       at: at(2))
        try store.deleteSearchableItems(withIdentifiers: (0..<40).map { "item-\($0 * 3)" }, at: at(3))
        // Deleted items come back, in a batch with a client state, and a later command of the same perform merges into one.
        var merge = SearchableItem(uniqueIdentifier: "item-9")
        merge.isUpdate = true
        merge.attributeSet.keywords = ["added"]
        try store.indexBatch(index: "main", clientState: Data([1]), at: at(4)) { batch in
            batch.indexSearchableItems((0..<80).map { item($0 * 3, variant: 4) })
            batch.indexSearchableItems([merge])
        }
        try store.deleteSearchableItems(withDomainIdentifiers: ["orders.2024"], at: at(5))
        try store.indexSearchableItems((290..<400).map { item($0, variant: 5) }, at: at(6))
    }

    @Test("the same bytes with and without prepared documents, and in a rebuild")
    func byteIdentical() throws {
        let paths = [temporaryDirectory(), temporaryDirectory(), temporaryDirectory()]
        defer { for path in paths { try? FileManager.default.removeItem(atPath: path) } }
        var withCache = testOptions()
        withCache.preparesSearchDocuments = true
        var without = testOptions()
        without.preparesSearchDocuments = false
        let prepared = try ActivityStore(path: paths[0], options: withCache)
        let plain = try ActivityStore(path: paths[1], options: without)
        try Self.workload(prepared)
        try Self.workload(plain)

        let counts = prepared.views.search.preparedDocuments.counts
        #expect(counts.entries == 0, "entries left behind")
        #expect(counts.hits > 500, "the writer used prepared documents")
        #expect(counts.misses > 0, "merges were tokenized by the writer")
        #expect(plain.views.search.preparedDocuments.counts.hits == 0)

        let live = try RebuildDeterminismTests.contents(of: prepared.views, in: prepared.eventStore.environment)
        #expect(live["search.postings"]?.isEmpty == false)
        RebuildDeterminismTests.expectIdentical(live, try RebuildDeterminismTests.contents(of: plain.views, in: plain.eventStore.environment))
        let (environment, views) = try RebuildDeterminismTests.rebuild(from: prepared, into: paths[2], chunk: 1)
        RebuildDeterminismTests.expectIdentical(live, try RebuildDeterminismTests.contents(of: views, in: environment))
        #expect(try prepared.search("café", now: at(10)).isEmpty == false)
    }

    @Test("a prepared document whose text differs from the event's is not used")
    func staleEntryIgnored() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The façade prepares nothing here, so the stale guess stays in place.
        var options = testOptions()
        options.preparesSearchDocuments = false
        let store = try ActivityStore(path: path, options: options)
        var tokenizer = Tokenizer()
        let stale = try PreparedDocument(IndexDocument(kind: "item", identifier: "item-1", fields: ["title": ["stale words"]]),
                                         tokenizer: &tokenizer)
        let keys = store.views.search.preparedDocuments.insert([stale])
        defer { store.views.search.preparedDocuments.remove(keys) }
        try store.indexSearchableItems([makeItem("item-1", title: "fresh words")], at: at(1))
        #expect(store.views.search.preparedDocuments.counts.hits == 1)
        #expect(ids(try store.search("fresh", now: at(2))) == ["item-1"])
        #expect(try store.search("stale", now: at(2)).isEmpty)
    }
}
