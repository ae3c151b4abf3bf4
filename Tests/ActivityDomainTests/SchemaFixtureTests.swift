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
        // And they say what the operations meant.
        #expect(try store.currentActivity(onDevice: "phone")?.activity.activity == "a1")
        #expect(try store.savedActivities().map(\.key) == ["order-42"])
        #expect(try store.savedActivity(forKey: "order-42")?.activity.title == "Large oat latte")
        #expect(try store.items().map(\.item.uniqueIdentifier) == ["menu-matcha"])
        #expect(try store.fetchLastClientState(index: "menu-indexer") == Data("v1".utf8))
        #expect(try store.search("matcha", now: at(20)).map(\.identifier) == ["menu-matcha"])
        #expect(try store.search("oat", now: at(20)).map(\.identifier) == ["order-42"])
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
