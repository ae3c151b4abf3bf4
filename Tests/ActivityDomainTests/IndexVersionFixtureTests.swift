import Foundation
import Testing
@testable import ActivityDomain
import EventLog

/// A store whose keyword index was written at version 12 (identities one key
/// each in `search.ids`), committed under `Fixtures/index-v12` (the log's
/// `data.mdb` and `index/data.mdb`), made by `eventlog apply` of main at
/// 81f1b44: in the default space, alice's and bob's, 30, 300 and 120 items
/// (``identifiers(count:)``, item k titled `words[k % 10] words[7k % 10] k`
/// from latte, matcha, oat, espresso, mocha, chai, flat, white, cold, brew)
/// in batches of 25, then alice's ``aliceRemoved`` deleted. This build
/// writes only version 13, so it cannot regenerate it.
@Suite("keyword index version 12 fixture")
struct IndexVersionFixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/index-v12").path

    /// Each space's identifiers: `menu-0000` for every third, `order-k` otherwise.
    static func identifiers(count: Int) -> [String] {
        (0..<count).map { $0 % 3 == 0 ? String(format: "menu-%04d", $0) : "order-\($0)" }
    }

    static var aliceRemoved: Set<String> {
        Set(stride(from: 1, to: 300, by: 7).filter { $0 % 3 != 0 }.map { "order-\($0)" })
    }

    @Test("an index of version 12 is rebuilt behind the log on open, and its identities answer lookups and patterns")
    func rebuildsOlderIndex() throws {
        let copy = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: copy)
        let store = try ActivityStore(path: copy, options: testOptions())
        let head = try store.head()
        _ = try store.eventStore.waitForIndex(through: head, timeout: .seconds(600))
        let status = try #require(try store.eventStore.indexStatus())
        let keywords = try #require(status.projections.first { $0.name == "search.keywords" })
        #expect(keywords.storedVersion == keywords.version && keywords.version / 1_000_000 == 13)
        #expect(status.applied == head)

        let alice = store.user("alice"), bob = store.user("bob")
        let aliceIds = Set(Self.identifiers(count: 300)).subtracting(Self.aliceRemoved)
        #expect(Set(try alice.items().map(\.uniqueIdentifier)) == aliceIds)
        // Every identifier by pattern (a walk of the space's pages), and by prefix (a seek).
        #expect(Set(try alice.query(#"uniqueIdentifier == "*""#, now: at(0), after: head).map(\.identifier)) == aliceIds)
        #expect(Set(try alice.query(#"uniqueIdentifier == "order-1*""#, now: at(0), after: head).map(\.identifier))
                == aliceIds.filter { $0.hasPrefix("order-1") })
        #expect(Set(try bob.query(#"uniqueIdentifier == "menu-00*""#, now: at(0), after: head).map(\.identifier))
                == Set(Self.identifiers(count: 120).filter { $0.hasPrefix("menu-00") }))
        #expect(try alice.query(#"uniqueIdentifier == "order-8""#, now: at(0), after: head).map(\.identifier) == [])  // removed
        #expect(try alice.query(#"uniqueIdentifier == "order-10""#, now: at(0), after: head).map(\.identifier) == ["order-10"])
        #expect(try store.query(#"uniqueIdentifier == "order-2*""#, now: at(0), after: head).map(\.identifier).sorted()
                == ["order-2", "order-20", "order-22", "order-23", "order-25", "order-26", "order-28", "order-29"])
        // A removed item's identity is gone from `ids`: indexing it again gives it a new document.
        #expect(try alice.search("latte", now: at(0), limit: 1_000, after: head).count
                == aliceIds.filter { Int($0.split(separator: "-")[1])! % 10 == 0 || Int($0.split(separator: "-")[1])! * 7 % 10 == 0 }.count)

        // The rebuilt index equals one built from the log by this build.
        let comparison = try store.eventStore.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
    }
}
