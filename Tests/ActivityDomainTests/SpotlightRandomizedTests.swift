import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

/// Random Core Spotlight commands over small pools of identifiers, domains
/// and words, so that replaces, merges, deletions and expiry collide often.
/// Words are plain lowercase ASCII and none is a prefix of another, so that
/// a brute-force scan can say which items a search must find.
struct RandomSpotlight {
    var rng: SeededGenerator
    let identifiers = (0..<24).map { "item-\($0)" }
    let domains: [String?] = [nil, "orders", "orders.2024", "orders.2024.q1", "orders2024", "misc"]
    static let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"]
    let removable = ["title", "displayName", "keywords", "comment", "rating", "contentDescription"]

    init(seed: UInt64) { rng = SeededGenerator(seed: seed) }

    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &rng)! }

    mutating func text() -> String? {
        guard chance(0.7) else { return nil }
        return (0..<Int.random(in: 1...3, using: &rng)).map { _ in pick(Self.words) }.joined(separator: " ")
    }

    mutating func attributes() -> ContentAttributeSet {
        var set = ContentAttributeSet()
        set.title = text()
        set.displayName = chance(0.3) ? text() : nil
        set.contentDescription = chance(0.3) ? text() : nil
        set.comment = chance(0.3) ? text() : nil
        set.keywords = chance(0.5) ? (0..<Int.random(in: 1...2, using: &rng)).map { _ in pick(Self.words) } : []
        set.rating = pick([nil, 1, 3, 5])
        return set
    }

    mutating func item(step: Int, update: Bool) -> SearchableItem {
        var item = SearchableItem(uniqueIdentifier: pick(identifiers), domainIdentifier: update && chance(0.6) ? nil : pick(domains),
                                  attributeSet: attributes(), isUpdate: update)
        // Expiration: the default (a month), or near the current step so that expiry and purges happen.
        if chance(0.4) { item.expirationDate = at(Double(step + Int.random(in: -5...40, using: &rng))) }
        if update {
            for name in removable where chance(0.2) && !item.attributeSet.has(name) { item.attributesToRemove.insert(name) }
        }
        return item
    }

    mutating func commands(step: Int) -> [ActivityCommand] {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<35: return [.indexSearchableItems((0..<Int.random(in: 1...4, using: &rng)).map { _ in item(step: step, update: false) })]
        case 35..<55: return [.indexSearchableItems((0..<Int.random(in: 1...3, using: &rng)).map { _ in item(step: step, update: chance(0.85)) })]
        case 55..<67: return [.deleteSearchableItems(identifiers: (0..<Int.random(in: 1...3, using: &rng)).map { _ in pick(identifiers + ["unknown"]) })]
        case 67..<77: return [.deleteSearchableItemsInDomains([pick(domains.compactMap { $0 })])]
        case 77..<79: return [.deleteAllSearchableItems]
        case 79..<87: return [.purgeExpired(now: at(Double(step)))]
        default:
            // A batch: delete and re-index in one transaction, with a client state.
            let index = pick(["i", "j"])
            return [.beginIndexBatch(index: index),
                    .deleteSearchableItems(identifiers: [pick(identifiers)]),
                    .indexSearchableItems((0..<Int.random(in: 1...4, using: &rng)).map { _ in item(step: step, update: chance(0.3)) }),
                    .endIndexBatch(index: index, clientState: Data("\(step)".utf8), expectedClientState: nil)]
        }
    }
}

@Suite("Core Spotlight under random workloads")
struct SpotlightRandomizedTests {
    /// The words of an item's text fields, as the brute force sees them.
    static func words(of item: SearchableItem) -> Set<String> {
        let set = item.attributeSet
        let texts = [set.title, set.displayName, set.contentDescription, set.comment].compactMap { $0 } + set.keywords
        return Set(texts.flatMap { $0.split(separator: " ").map(String.init) })
    }

    /// Every search and query result, checked against a scan of the item store.
    static func checkAgainstBruteForce(_ store: ActivityStore, now: Date, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let all = try store.items().map(\.item)
        let live = all.filter { $0.expirationDate! > now }
        func expect(_ hits: [SearchHit], _ expected: [SearchableItem], _ what: String) {
            #expect(Set(ids(hits)) == Set(expected.map(\.uniqueIdentifier)), "\(what) at \(now)", sourceLocation: sourceLocation)
        }
        for word in RandomSpotlight.words {
            let hits = try store.search(word, now: now, limit: 1000, after: try store.head())
            expect(hits, live.filter { words(of: $0).contains(word) }, "search \(word)")
            // By score, then identifier.
            let ordered = zip(hits, hits.dropFirst()).allSatisfy { $0.score > $1.score || ($0.score == $1.score && $0.identifier < $1.identifier) }
            #expect(ordered, "search \(word) is not ordered", sourceLocation: sourceLocation)
            let prefix = String(word.prefix(2))
            expect(try store.search(prefix, now: now, limit: 1000, after: try store.head()), live.filter { words(of: $0).contains { $0.hasPrefix(prefix) } }, "search \(prefix)")
            expect(try store.search("alpha \(word)", now: now, limit: 1000, after: try store.head()),
                   live.filter { words(of: $0).isSuperset(of: ["alpha", word]) }, "search alpha \(word)")
            expect(try store.query(#"keywords == "\#(word)""#, now: now, after: try store.head()), live.filter { $0.attributeSet.keywords.contains(word) }, "keywords == \(word)")
            expect(try store.query(#"title == "\#(word)*"c"#, now: now, after: try store.head()), live.filter { $0.attributeSet.title?.hasPrefix(word) == true }, "title == \(word)*")
            expect(try store.query(#"comment == "\#(word)"w"#, now: now, after: try store.head()),
                   live.filter { $0.attributeSet.comment.map { $0.split(separator: " ").contains(Substring(word)) } == true }, "comment == \(word)w")
        }
        expect(try store.query(#"kind == "item""#, now: now, after: try store.head()), live, "kind == item")
        expect(try store.query(#"title == "*""#, now: now, after: try store.head()), live.filter { $0.attributeSet.title != nil }, "title present")
        expect(try store.query(#"displayName != "*""#, now: now, after: try store.head()), live.filter { $0.attributeSet.displayName == nil }, "displayName absent")
        expect(try store.query("rating >= 3", now: now, after: try store.head()), live.filter { ($0.attributeSet.rating ?? 0) >= 3 }, "rating >= 3")
        expect(try store.query(#"domainIdentifier == "orders""#, now: now, after: try store.head()), live.filter { $0.domainIdentifier == "orders" }, "domain == orders")
        expect(try store.query(#"domainIdentifier == "orders*" && rating < 3"#, now: now, after: try store.head()),
               live.filter { $0.domainIdentifier?.hasPrefix("orders") == true && ($0.attributeSet.rating ?? 3) < 3 }, "domain orders* and rating < 3")
        for domain in ["orders", "orders.2024", "misc", "orders2024"] {
            #expect(try store.items(inDomain: domain).map(\.uniqueIdentifier)
                        == all.filter { $0.domainIdentifier.map { SpotlightRules.isInDomain($0, domain) } == true }.map(\.uniqueIdentifier),
                    "items in \(domain)", sourceLocation: sourceLocation)
        }
        // The index holds exactly the item store's documents, and exact statistics.
        try store.readIndex { index, txn, log in
            let documents = try index.documents(in: txn, contentIn: log)
            #expect(documents.count == all.count, sourceLocation: sourceLocation)
            for item in all {
                let expected = SearchDocuments.item(item.proto)
                #expect(try index.document(kind: "item", identifier: item.uniqueIdentifier, in: txn, contentIn: log)?.fields == expected.fields,
                        "\(item.uniqueIdentifier)", sourceLocation: sourceLocation)
            }
            let stats = try index.statistics(in: txn)
            #expect(stats.documentCount == UInt64(all.count), sourceLocation: sourceLocation)
            let titleWords = all.compactMap(\.attributeSet.title).map { UInt64($0.split(separator: " ").count) }.reduce(0, +)
            #expect(stats.totalLengths[IndexField.title.slot] == titleWords, sourceLocation: sourceLocation)
            #expect(stats.documentsWithField[IndexField.title.slot] == UInt64(all.filter { $0.attributeSet.title != nil }.count),
                    sourceLocation: sourceLocation)
        }
    }

    @Test("postings stay exact: search and query equal a brute-force scan of the item store", arguments: [1, 2, 3] as [UInt64])
    func exactness(seed: UInt64) throws {
        try withReopenedSpotlightStore { store in
            var generator = RandomSpotlight(seed: seed)
            for step in 0..<600 {
                // The generator makes valid commands only: every one must be taken.
                try store.write(generator.commands(step: step), at: at(Double(step)))
                if step % 50 == 49 {
                    try Self.checkAgainstBruteForce(store, now: at(Double(step)))
                    try Self.checkAgainstBruteForce(store, now: at(Double(step + 20)))
                }
            }
            #expect(try store.head() > 300)
        }
    }

    @Test("after a random workload, items and activities, a rebuild reproduces every view byte for byte")
    func rebuild() throws {
        let rebuildPaths = [temporaryDirectory(), temporaryDirectory(), temporaryDirectory()]
        defer { for path in rebuildPaths { try? FileManager.default.removeItem(atPath: path) } }
        try withReopenedSpotlightStore { store in
            var spotlight = RandomSpotlight(seed: 7)
            var activities = RandomCommands(seed: 7)
            var activityDocuments = 0
            var outcomes = Outcomes()
            for step in 0..<1500 {
                let commands = step % 3 == 0 ? [activities.command(step: step)] : spotlight.commands(step: step)
                try outcomes.run { _ = try store.write(commands, at: at(Double(step))) }
                if step % 100 == 99 {
                    // The index holds exactly the saved copies eligible for search.
                    let indexed = try store.readIndex { index, txn, log in
                        try index.documents(in: txn, contentIn: log).filter { $0.kind == "activity" }.map(\.identifier)
                    }
                    let saved = try store.savedActivities().filter(\.activity.eligibleForSearch).map(\.key)
                    #expect(indexed.sorted() == saved.sorted(), "step \(step)")
                    activityDocuments += indexed.count
                }
            }
            #expect(activityDocuments > 0)
            #expect(outcomes.accepted >= 750 && outcomes.rejectedCount >= 50, "\(outcomes)")
            let live = try RebuildDeterminismTests.contents(of: store.views, in: store.eventStore.environment)
            #expect(live["spotlight.items"]?.isEmpty == false)
            let liveIndex = try RebuildDeterminismTests.indexContents(of: store)
            #expect(liveIndex["search.runs"]?.isEmpty == false)
            // One event per transaction, a few hundred, and everything in one.
            for (path, chunk) in zip(rebuildPaths, [1, 257, 1_000_000]) {
                let (environment, views) = try RebuildDeterminismTests.rebuild(from: store, into: path, chunk: chunk)
                RebuildDeterminismTests.expectIdentical(live, try RebuildDeterminismTests.contents(of: views, in: environment))
                let (indexEnvironment, index) = try RebuildDeterminismTests.rebuildIndex(from: store, into: path + "-index", chunk: chunk)
                defer { try? FileManager.default.removeItem(atPath: path + "-index") }
                RebuildDeterminismTests.expectIdentical(liveIndex, try RebuildDeterminismTests.contents(of: index.all, in: indexEnvironment))
            }
        }
    }
}
