import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

/// A store of every event type at schema version 1, committed under
/// `Fixtures/schema-v1`. Every later version must decode its payloads and
/// build the same views from them: it guards the `.proto` schemas as the
/// engine's format-1 fixture guards the records. Regenerate only when the
/// schemas gain a version, never to make this pass:
/// `EVENTLOG_WRITE_FIXTURE=1 swift test --filter SchemaFixtureTests`.
@Suite("The committed schema-v1 fixture")
struct SchemaFixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/schema-v1").path

    /// One of each operation, with fixed times.
    static func write(into store: ActivityStore) throws {
        try store.declareActivityTypes([viewOrder, editOrder], at: at(0))
        var latte = makeActivity("a1", device: "phone")
        latte.title = "Oat latte"
        latte.userInfo = ["orderID": .integer(42), "placed": .date(at(1)), "receipt": .url(URL(string: "https://coffee.example.com/r/42")!)]
        latte.eligibleForSearch = true
        latte.persistentIdentifier = "order-42"
        latte.keywords = ["coffee", "oat"]
        try store.createActivity(latte, at: at(1))
        try store.becomeCurrent("a1", at: at(2))
        try store.addUserInfoEntries(["size": .string("large")], to: "a1", at: at(3))
        var update = ActivityUpdate()
        update.title = "Large oat latte"
        try store.updateActivity("a1", update, at: at(4))
        var tea = makeActivity("a2", device: "phone", type: editOrder)
        tea.title = "Chai"
        tea.eligibleForSearch = true
        tea.persistentIdentifier = "order-7"
        try store.createActivity(tea, at: at(5))
        try store.becomeCurrent("a2", at: at(6))
        try store.resignCurrent("a2", at: at(7))
        try store.invalidate("a2", at: at(8))
        try store.deleteSavedUserActivities(withPersistentIdentifiers: ["order-7"], at: at(9))
        var menu = SearchableItem(uniqueIdentifier: "menu-matcha", domainIdentifier: "menu.drinks")
        menu.attributeSet.title = "抹茶ラテ"
        menu.attributeSet.keywords = ["matcha", "tea"]
        var order = SearchableItem(uniqueIdentifier: "order-item-1", domainIdentifier: "orders.2026")
        order.attributeSet.title = "Order 1: churros"
        order.attributeSet.rating = 4
        try store.indexBatch(index: "menu-indexer", clientState: Data("v1".utf8), at: at(10)) { batch in
            batch.indexSearchableItems([menu, order])
        }
        var merge = SearchableItem(uniqueIdentifier: "menu-matcha", isUpdate: true)
        merge.attributeSet.displayName = "Matcha latte"
        try store.indexSearchableItems([merge], at: at(11))
        try store.deleteSearchableItems(withDomainIdentifiers: ["orders"], at: at(12))
        var old = SearchableItem(uniqueIdentifier: "old", expirationDate: at(13))
        old.attributeSet.title = "Expired"
        try store.indexSearchableItems([old], at: at(12.5))
        try store.purgeExpired(now: at(14), at: at(14))
        try store.deleteSearchableItems(withIdentifiers: ["nothing-here"], at: at(15))
        // a2 superseded a1 on the phone, then resigned: nothing is current there until a1 is again.
        try store.becomeCurrent("a1", at: at(16))
    }

    @Test("decodes every payload and rebuilds the views it was written with")
    func decodesAndRebuilds() throws {
        if ProcessInfo.processInfo.environment["EVENTLOG_WRITE_FIXTURE"] == "1" { try regenerate() }
        let copy = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: copy)
        let store = try ActivityStore(path: copy, options: testOptions())
        let report = try store.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        #expect(report.recordsChecked > 15)
        // The views stored in the fixture equal the ones this build makes from its log.
        let comparison = try store.eventStore.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
        // Version 1 had no spaces: everything landed in the default space.
        #expect(try store.users().map(\.user) == [""])
        // And they say what the operations meant.
        #expect(try store.currentActivity(onDevice: "phone")?.activity.activity == "a1")
        #expect(try store.savedActivities().map(\.key) == ["order-42"])
        #expect(try store.savedActivity(forKey: "order-42")?.activity.title == "Large oat latte")
        #expect(try store.items().map(\.item.uniqueIdentifier) == ["menu-matcha"])
        #expect(try store.fetchLastClientState(index: "menu-indexer") == Data("v1".utf8))
        #expect(try store.search("matcha", now: at(20), after: try store.head()).map(\.identifier) == ["menu-matcha"])
        #expect(try store.search("oat", now: at(20), after: try store.head()).map(\.identifier) == ["order-42"])
        guard case .removed(let removal) = try store.resolve("order-7") else {
            Issue.record("order-7 should resolve to its removal")
            return
        }
        #expect(removal.operation == "savedActivities.deleted")
        // Every event type of schema version 1 is in it.
        let types = Set(try store.eventStore.events().map(\.type))
        #expect(types.isSuperset(of: [
            "activityTypes.declared", "activity.created", "activity.becameCurrent", "activity.userInfoEntriesAdded",
            "activity.updated", "activity.resignedCurrent", "activity.invalidated", "activity.saved",
            "savedActivities.deleted", "searchableItems.indexed", "searchableIndex.batchCommitted",
            "searchableItems.domainsDeleted", "searchableItems.expiredPurged", "searchableItems.deleted",
        ]), "\(types.sorted())")
    }

    func regenerate() throws {
        let live = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: live) }
        let store = try ActivityStore(path: live, options: testOptions())
        try Self.write(into: store)
        try? FileManager.default.removeItem(atPath: Self.fixture)
        try store.eventStore.environment.copy(to: Self.fixture)
    }
}

/// A store of every event type at schema version 2 (events that carry their
/// user space), committed under `Fixtures/schema-v2`: two users who reuse
/// the same ids, and the default space. Regenerate only when the schemas
/// gain a version: `EVENTLOG_WRITE_FIXTURE=1 swift test --filter SchemaV2FixtureTests`.
@Suite("The committed schema-v2 fixture")
struct SchemaV2FixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/schema-v2").path

    static func write(into store: ActivityStore) throws {
        try store.declareActivityTypes([viewOrder, editOrder], at: at(0))
        for (n, user) in ["alice", "bob"].enumerated() {
            let space = store.user(user)
            let t = Double(n) * 100
            var latte = makeActivity("a1", device: "phone")
            latte.title = "Latte for \(user)"
            latte.eligibleForSearch = true
            latte.eligibleForPrediction = true
            latte.persistentIdentifier = "order-42"
            latte.keywords = ["coffee"]
            try space.createActivity(latte, at: at(t + 1))
            try space.becomeCurrent("a1", at: at(t + 2))
            try space.addUserInfoEntries(["size": .string("large")], to: "a1", at: at(t + 3))
            var update = ActivityUpdate()
            update.title = "Large latte for \(user)"
            try space.updateActivity("a1", update, at: at(t + 4))
            try space.createActivity(makeActivity("a2", device: "tablet") { $0.persistentIdentifier = "order-7"; $0.eligibleForSearch = true },
                                     at: at(t + 5))
            try space.becomeCurrent("a2", at: at(t + 6))
            try space.resignCurrent("a2", at: at(t + 7))
            try space.invalidate("a2", at: at(t + 8))
            try space.deleteSavedUserActivities(withPersistentIdentifiers: ["order-7"], at: at(t + 9))
            var item = SearchableItem(uniqueIdentifier: "order-1", domainIdentifier: "orders.2026")
            item.attributeSet.title = "Order of \(user)"
            var old = SearchableItem(uniqueIdentifier: "old", expirationDate: at(t + 50))
            old.attributeSet.title = "Expires"
            try space.indexBatch(index: "orders-indexer", clientState: Data(user.utf8), at: at(t + 10)) { batch in
                batch.indexSearchableItems([item, old])
            }
            try space.deleteSearchableItems(withIdentifiers: ["nothing"], at: at(t + 11))
            try space.deleteSearchableItems(withDomainIdentifiers: ["menu"], at: at(t + 12))
        }
        // bob logs out of search: his items go, alice's stay.
        try store.user("bob").deleteAllSearchableItems(at: at(300))
        try store.user("bob").deleteAllSavedUserActivities(at: at(301))
        // Store-wide purge: alice's expired item, as an event of her space.
        try store.purgeExpired(now: at(200), at: at(302))
        var tea = makeActivity("a1", device: "phone")
        tea.title = "Default-space tea"
        try store.createActivity(tea, at: at(303))
    }

    @Test("decodes every payload, rebuilds the views it was written with, and keeps the spaces apart")
    func decodesAndRebuilds() throws {
        if ProcessInfo.processInfo.environment["EVENTLOG_WRITE_FIXTURE"] == "1" {
            let live = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: live) }
            let store = try ActivityStore(path: live, options: testOptions())
            try Self.write(into: store)
            try? FileManager.default.removeItem(atPath: Self.fixture)
            try store.eventStore.environment.copy(to: Self.fixture)
        }
        let copy = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: copy)
        let store = try ActivityStore(path: copy, options: testOptions())
        let report = try store.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        let comparison = try store.eventStore.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
        let events = try store.eventStore.events()
        #expect(events.allSatisfy { $0.schemaVersion == ($0.type == ActivityEventCatalog.activityTypesDeclared ? 1 : 2) })
        #expect(try events.compactMap { try EventSpace.user(of: $0) }.filter { !$0.isEmpty }.count > 30)
        #expect(try store.users().map(\.user) == ["", "alice", "bob"])
        let alice = store.user("alice"), bob = store.user("bob")
        #expect(try alice.savedActivity(forKey: "order-42")?.activity.title == "Large latte for alice")
        #expect(try bob.savedActivities().isEmpty)
        #expect(try alice.items().map(\.uniqueIdentifier) == ["order-1"])
        #expect(try bob.items().isEmpty)
        #expect(try alice.fetchLastClientState(index: "orders-indexer") == Data("alice".utf8))
        #expect(try bob.fetchLastClientState(index: "orders-indexer") == nil)
        #expect(try alice.search("order", now: at(400), after: try alice.head()).map(\.identifier) == ["order-1"])
        #expect(try store.activity("a1")?.activity.title == "Default-space tea")
        #expect(try alice.suggestions(now: at(400)).map(\.key) == ["order-42"])
        let types = Set(events.map(\.type))
        #expect(types.isSuperset(of: ActivityEventCatalog.types.union(SpotlightEventCatalog.types)), "\(types.sorted())")
    }
}
