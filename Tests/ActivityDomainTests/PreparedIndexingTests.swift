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

    /// The commands of the workload, each write with its time.
    static func workload() -> [(commands: [ActivityCommand], at: Date)] {
        var update = SearchableItem(uniqueIdentifier: "item-5")
        update.isUpdate = true
        update.attributeSet.title = "merged café"
        var merge = SearchableItem(uniqueIdentifier: "item-9")
        merge.isUpdate = true
        merge.attributeSet.keywords = ["added"]
        return [
            ([.indexSearchableItems((0..<300).map { item($0) })], at(1)),
            // Replacements with other text, a merge, an identifier twice in one batch.
            ([.indexSearchableItems((0..<120).map { item($0 * 2, variant: 1) } + [update, item(7, variant: 2), item(7, variant: 3)])], at(2)),
            ([.deleteSearchableItems(identifiers: (0..<40).map { "item-\($0 * 3)" })], at(3)),
            // Deleted items come back, in a batch with a client state, and a later command merges into one.
            ([.beginIndexBatch(index: "main"), .indexSearchableItems((0..<80).map { item($0 * 3, variant: 4) }),
              .indexSearchableItems([merge]), .endIndexBatch(index: "main", clientState: Data([1]), expectedClientState: nil)], at(4)),
            ([.deleteSearchableItemsInDomains(["orders.2024"])], at(5)),
            ([.indexSearchableItems((290..<400).map { item($0, variant: 5) })], at(6)),
        ]
    }

    /// Runs the workload; with `ahead`, every replaced item is tokenized
    /// before its write (so the writer finds all of them prepared).
    static func run(_ store: ActivityStore, ahead: Bool) throws {
        for (commands, time) in workload() {
            let timed = commands.map { ActivityCommand.Timed($0) }
            let keys = ahead ? store.views.search.prepareAhead(timed, at: time) : []
            defer { store.views.search.preparedDocuments.remove(keys) }
            try store.write(timed, at: time)
        }
    }

    @Test("the same bytes with and without prepared documents, and in a rebuild")
    func byteIdentical() throws {
        let paths = [temporaryDirectory(), temporaryDirectory(), temporaryDirectory(), temporaryDirectory()]
        defer { for path in paths { try? FileManager.default.removeItem(atPath: path) } }
        var alongside = testOptions()
        alongside.preparesSearchDocuments = true
        var without = testOptions()
        without.preparesSearchDocuments = false
        let ahead = try ActivityStore(path: paths[0], options: without)
        let beside = try ActivityStore(path: paths[1], options: alongside)
        let plain = try ActivityStore(path: paths[2], options: without)
        try Self.run(ahead, ahead: true)
        try Self.run(beside, ahead: false)
        try Self.run(plain, ahead: false)

        let counts = ahead.views.search.preparedDocuments.counts
        #expect(counts.entries == 0, "entries left behind")
        #expect(counts.hits > 500, "the writer used prepared documents")
        #expect(counts.whole > 500, "the writer took prepared documents whole: the event recorded the bytes they came from")
        #expect(counts.misses > 0, "merges were tokenized by the writer")
        // Beside the write, how many are ready in time depends on the threads.
        #expect(beside.views.search.preparedDocuments.counts.entries == 0)
        #expect(plain.views.search.preparedDocuments.counts.hits == 0)

        let reference = try RebuildDeterminismTests.contents(of: plain.views, in: plain.eventStore.environment)
        // Fewer than 4,096 documents: their postings are in the open block's runs.
        #expect(reference["search.runs"]?.isEmpty == false)
        for store in [ahead, beside] {
            RebuildDeterminismTests.expectIdentical(reference, try RebuildDeterminismTests.contents(of: store.views, in: store.eventStore.environment))
        }
        let (environment, views) = try RebuildDeterminismTests.rebuild(from: ahead, into: paths[3], chunk: 1)
        RebuildDeterminismTests.expectIdentical(reference, try RebuildDeterminismTests.contents(of: views, in: environment))
        #expect(try ahead.search("café", now: at(10)).isEmpty == false)
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
