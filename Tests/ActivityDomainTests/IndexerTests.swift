import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

/// The keyword index follows the log in its own environment (SPEC §2):
/// what a search sees, and when; the indexer's pipeline writes what a
/// rebuild writes; followers and time travel build theirs the same way.
@Suite("The index behind the log")
struct IndexerTests {
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

    /// Replacements, merges, deletions and a batch, each perform with its time.
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

    static func options(readAhead: Int? = nil, background: Bool = true) -> ActivityStoreOptions {
        var options = testOptions()
        if let readAhead { options.store.indexReadAhead = readAhead }
        options.store.indexesInBackground = background
        return options
    }

    @Test("the index is the same bytes prepared on the indexer's second thread or on its writer's, and rebuilt one event a transaction")
    func byteIdentical() throws {
        let paths = [temporaryDirectory(), temporaryDirectory(), temporaryDirectory()]
        defer { for path in paths { try? FileManager.default.removeItem(atPath: path) } }
        let threaded = try ActivityStore(path: paths[0], options: Self.options())
        let single = try ActivityStore(path: paths[1], options: Self.options(readAhead: 0))
        for store in [threaded, single] {
            for (commands, time) in Self.workload() { try store.write(commands.map { ActivityCommand.Timed($0) }, at: time) }
        }
        let reference = try RebuildDeterminismTests.indexContents(of: threaded)
        // Fewer than 4,096 documents: their postings are in the open block's runs.
        #expect(reference["search.runs"]?.isEmpty == false)
        RebuildDeterminismTests.expectIdentical(reference, try RebuildDeterminismTests.indexContents(of: single))
        let (environment, index) = try RebuildDeterminismTests.rebuildIndex(from: single, into: paths[2], chunk: 1)
        RebuildDeterminismTests.expectIdentical(reference, try RebuildDeterminismTests.contents(of: index.all, in: environment))
        let comparison = try threaded.eventStore.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
        #expect(comparison.report.index?.position == (try threaded.head()))
        #expect(try ids(threaded.search("café", now: at(10), after: try threaded.head())).isEmpty == false)
    }

    @Test("a search with after: sees the write it names, each time")
    func afterSeesTheWrite() throws {
        try withStore { store in
            let alice = store.user("alice")
            for n in 0..<40 {
                let result = try alice.indexSearchableItems([makeItem("item-\(n)", title: "word\(n) shared")], at: at(Double(n)))
                let position = try #require(result.positions?.upperBound)
                #expect(ids(try alice.search("word\(n)", now: at(100), after: position)) == ["item-\(n)"])
                #expect(try alice.query(#"title == "word\#(n)*"c"#, now: at(100), after: position).count == 1)
            }
            #expect(try alice.search("shared", now: at(100), limit: 100, after: try store.head()).count == 40)
        }
    }

    @Test("without after:, a lagging index answers as it stands and says how far behind it is; after: a position it has not reached fails saying so")
    func lagIsReported() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // No indexer runs: the index stays where it is until caught up.
        let store = try ActivityStore(path: path, options: Self.options(background: false))
        try store.indexSearchableItems([makeItem("one", title: "first latte")], at: at(1))
        try store.eventStore.catchUpIndex()
        try store.indexSearchableItems([makeItem("two", title: "second latte")], at: at(2))
        let status = try #require(try store.indexStatus())
        #expect(status.applied == 1 && status.head == 2 && status.eventsBehind == 1 && !status.isIndexing)
        #expect(status.secondsBehind > 0)
        #expect("\(status)".contains("1 events behind the log (applied through 1, head 2"))
        let viewIndex = try #require(try store.eventStore.viewStatus().index)
        #expect(viewIndex.applied == 1 && viewIndex.head == 2 && viewIndex.eventsBehind == 1)
        #expect(try store.eventStore.viewStatus().isCurrent, "the command views are current; the index's lag is not theirs")
        // As it stands: the first write only.
        #expect(ids(try store.search("latte", now: at(3))) == ["one"])
        let error = #expect(throws: EventLogError.self) {
            try store.search("latte", now: at(3), after: 2, timeout: .milliseconds(100))
        }
        #expect(error?.code == .indexBehind)
        #expect(error?.position == 1)
        #expect("\(error!)".contains("the index has applied the log through position 1, 1 events short of position 2 (the log's head is 2)"))
        #expect("\(error!)".contains("no indexer runs in this process"))
        try store.eventStore.catchUpIndex()
        #expect(ids(try store.search("latte", now: at(3), after: 2, timeout: .zero)).sorted() == ["one", "two"])
        #expect(try store.indexStatus()?.eventsBehind == 0)
    }

    @Test("forget, then search at once: nothing of the user comes back, before and after the index applies the forget")
    func forgetThenSearch() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore(path: path, options: Self.options(background: false))
        let alice = store.user("alice"), bob = store.user("bob")
        try alice.indexSearchableItems([makeItem("a1", title: "secret latte"), makeItem("a2", title: "secret tea")], at: at(1))
        try bob.indexSearchableItems([makeItem("b1", title: "open latte")], at: at(2))
        try store.eventStore.catchUpIndex()
        #expect(ids(try alice.search("secret", now: at(3))).sorted() == ["a1", "a2"])
        let aliceSpace = try #require(try store.eventStore.read { try store.views.spaces.id(of: "alice", in: $0) })

        try store.forgetUser("alice", at: at(4))
        // The index has not applied the forget: her documents are still in it, under her old space.
        let stale = try store.eventStore.readIndex { index, _ in
            try store.indexViews.search.index.space(aliceSpace).statistics(in: index).documentCount
        }
        #expect(stale == 2)
        #expect(try alice.search("secret", now: at(5)).isEmpty)
        #expect(try alice.query(#"title == "*""#, now: at(5)).isEmpty)
        #expect(try !store.users().contains { $0.user == "alice" })
        #expect(ids(try bob.search("latte", now: at(5))) == ["b1"])
        // Alice comes back: a new space, only what she writes now.
        try alice.indexSearchableItems([makeItem("a3", title: "fresh latte")], at: at(6))
        #expect(ids(try alice.search("latte", now: at(7))).isEmpty)   // not applied yet
        try store.eventStore.catchUpIndex()
        #expect(ids(try alice.search("latte", now: at(7), after: try store.head())) == ["a3"])
        let dropped = try store.eventStore.readIndex { index, _ in
            try store.indexViews.search.index.space(aliceSpace).statistics(in: index).documentCount
        }
        #expect(dropped == 0)
        #expect(try store.eventStore.verifyViews(full: true).isEqual)
    }

    @Test("a follower and a time-travel copy build their index through the indexer, equal to the leader's")
    func followerAndTimeTravel() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let leader = try ActivityStore(path: dir + "/leader", options: Self.options())
        for (commands, time) in Self.workload() { try leader.write(commands.map { ActivityCommand.Timed($0) }, at: time) }
        try leader.user("alice").indexSearchableItems([makeItem("x", title: "alice's latte")], at: at(7))
        let head = try leader.head()
        let expected = try RebuildDeterminismTests.indexContents(of: leader)

        let follower = try ActivityStore(path: dir + "/follower", options: Self.options())
        try ForgetFollowTests.follow(follower, from: leader, through: head, batch: 2)
        RebuildDeterminismTests.expectIdentical(expected, try RebuildDeterminismTests.indexContents(of: follower))
        #expect(ids(try follower.user("alice").search("latte", now: at(8), after: head)) == ["x"])

        try leader.eventStore.replay(through: head, into: dir + "/copy")
        let copy = try ActivityStore(path: dir + "/copy", options: Self.options())
        #expect(try copy.indexStatus()?.applied == head)
        RebuildDeterminismTests.expectIdentical(expected, try RebuildDeterminismTests.indexContents(of: copy))

        // As of an earlier position: the index as the leader's was then.
        try leader.eventStore.replay(through: 2, into: dir + "/early")
        let early = try ActivityStore(path: dir + "/early", options: Self.options())
        #expect(try early.indexStatus()?.applied == 2)
        #expect(try early.search("café", now: at(10), after: 2).isEmpty == false)
        #expect(try early.user("alice").search("latte", now: at(10), after: 2).isEmpty)
    }

    @Test("a store of the one-environment layout opens: its index's databases leave the log's environment, and the index is rebuilt behind the log")
    func oneEnvironmentLayout() throws {
        let copy = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: SchemaFixtureTests.fixture, toPath: copy)
        do {
            var options = EnvironmentOptions()
            options.maxDatabases = 128
            options.readOnly = true
            let before = try Environment(path: copy, options: options)
            #expect(try before.read { try $0.databaseNames() }.contains("search.docs"), "the fixture is of the one-environment layout")
        }
        let store = try ActivityStore(path: copy, options: testOptions())
        #expect(try !store.eventStore.environment.read { try $0.databaseNames() }.contains { $0.hasPrefix("search.") })
        #expect(try store.eventStore.checkpoint(of: "search.keywords") == nil)
        #expect(ids(try store.search("matcha", now: at(20), after: try store.head())) == ["menu-matcha"])
        #expect(try store.eventStore.verifyViews(full: true).isEqual)
    }

    @Test("the index's map growing in a transaction of several pieces loses none of them: the indexer catches up a backlog through the head, as a rebuild does")
    func mapGrowthKeepsEveryPiece() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // A backlog of 12,000 events (47 pieces of 256) behind an index whose map starts at 1 MiB
        // (about 1.36 MB of pages; 6,000 and 8,000 fit in it once identities were kept in pages,
        // keyword index version 13).
        do {
            let store = try ActivityStore(path: path, options: Self.options(background: false))
            for write in 0..<24 {
                try store.write((0..<500).map { k in
                    let n = write * 500 + k
                    return ActivityCommand.Timed(.indexSearchableItems([makeItem("item-\(n)", title: "word\(n) shared \(Self.words[n % Self.words.count])")]))
                }, at: at(Double(write)))
            }
        }
        // No read-ahead: each piece is read when the transaction asks for it, so one transaction takes many.
        let store = try ActivityStore(path: path, options: Self.options(readAhead: 0))
        let head = try store.head()
        #expect(try store.eventStore.waitForIndex(timeout: .seconds(60)) == head)
        #expect(store.eventStore.index!.environment.info().mapSize > 1 << 20, "the index's map grew")
        for n in [0, 255, 256, 3_001, 11_999] {
            // The last word of a search is a prefix too: word255 finds item-2550 as well.
            #expect(ids(try store.search("word\(n)", now: at(20), after: head)).contains("item-\(n)"), "word\(n)")
        }
        let comparison = try store.eventStore.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
    }
}
