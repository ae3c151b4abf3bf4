import EventLog
import Foundation
import Testing
@testable import ActivityDomain

@Suite("Saved activities (SPEC §3, saving and deletion)")
struct SavingTests {
    @Test("saved only when eligible for search or prediction")
    func eligibility() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("none", device: "d1"))
            try store.createActivity(makeActivity("search", device: "d2") { $0.eligibleForSearch = true })
            try store.createActivity(makeActivity("prediction", device: "d3") { $0.eligibleForPrediction = true })
            try store.createActivity(makeActivity("handoffOnly", device: "d4") { $0.eligibleForHandoff = true })
            for id in ["none", "search", "prediction", "handoffOnly"] { try store.becomeCurrent(id) }
            #expect(try store.savedActivities().map(\.key) == ["prediction", "search"])
        }
    }

    @Test("not saved when expired at the event's time")
    func expiry() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("past", device: "d1") {
                $0.eligibleForSearch = true
                $0.expirationDate = at(10)
            })
            try store.createActivity(makeActivity("exact", device: "d2") {
                $0.eligibleForSearch = true
                $0.expirationDate = at(20)
            })
            try store.createActivity(makeActivity("future", device: "d3") {
                $0.eligibleForSearch = true
                $0.expirationDate = at(100)
            })
            try store.becomeCurrent("past", at: at(11))
            try store.becomeCurrent("exact", at: at(20))
            let result = try store.becomeCurrent("future", at: at(20))
            #expect(result.savedKey == "future")
            #expect(try store.savedActivities().map(\.key) == ["future"])
            #expect(try store.savedActivity(forKey: "future")?.savedAt == at(20))
        }
    }

    @Test("saved under persistentIdentifier, else the activity id; a copy under an old key stays")
    func keys() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") {
                $0.eligibleForSearch = true
                $0.title = "Latte"
            })
            try store.becomeCurrent("a1", at: at(1))
            #expect(try store.savedActivities().map(\.key) == ["a1"])
            var update = ActivityUpdate()
            update.persistentIdentifier = "order-42"
            let result = try store.updateActivity("a1", update, at: at(2))
            #expect(result.eventTypes == [ActivityEventCatalog.activityUpdated, ActivityEventCatalog.activitySaved])
            #expect(try store.savedActivities().map(\.key) == ["a1", "order-42"])
            #expect(try store.savedActivity(forKey: "order-42")?.activity.persistentIdentifier == "order-42")
        }
    }

    @Test("an update while current replaces the copy; while inactive it does not")
    func updateWhileCurrent() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") {
                $0.eligibleForSearch = true
                $0.persistentIdentifier = "p1"
                $0.title = "one"
            })
            try store.becomeCurrent("a1", at: at(1))
            var update = ActivityUpdate()
            update.title = "two"
            try store.updateActivity("a1", update, at: at(2))
            #expect(try store.savedActivity(forKey: "p1")?.activity.title == "two")
            try store.addUserInfoEntries(["size": "medium"], to: "a1", at: at(3))
            #expect(try store.savedActivity(forKey: "p1")?.activity.userInfo == ["size": "medium"])
            try store.resignCurrent("a1", at: at(4))
            update.title = "three"
            try store.updateActivity("a1", update, at: at(5))
            let saved = try #require(try store.savedActivity(forKey: "p1"))
            #expect(saved.activity.title == "two")
            #expect(saved.savedAt == at(3))
            // Resigning and invalidating keep the copy.
            try store.invalidate("a1", at: at(6))
            #expect(try store.savedActivity(forKey: "p1") != nil)
        }
    }

    @Test("userInfo is cut to requiredUserInfoKeys; a missing required key is an error")
    func requiredKeys() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") {
                $0.eligibleForSearch = true
                $0.requiredUserInfoKeys = ["orderID", "size"]
                $0.userInfo = ["orderID": 42, "size": "medium", "scratch": "x"]
            })
            try store.becomeCurrent("a1")
            #expect(try store.savedActivity(forKey: "a1")?.activity.userInfo == ["orderID": 42, "size": "medium"])
            // The activity itself keeps everything.
            #expect(try store.activity("a1")?.activity.userInfo.count == 3)

            try store.createActivity(makeActivity("a2", device: "laptop") {
                $0.eligibleForPrediction = true
                $0.requiredUserInfoKeys = ["orderID", "size"]
                $0.userInfo = ["orderID": 7]
            })
            try expectRejected(.missingRequiredUserInfoKeys, by: store) { try store.becomeCurrent("a2") }
            #expect(try store.activity("a2")?.state == .inactive)
            do {
                try store.becomeCurrent("a2")
            } catch let error as ActivityError {
                #expect(error.value == "size")
            }
            // While current, an update that drops a required key is rejected too.
            var update = ActivityUpdate()
            update.userInfo = ["scratch": "y"]
            try expectRejected(.missingRequiredUserInfoKeys, by: store) { try store.updateActivity("a1", update) }
            // Not eligible for saving: no check.
            try store.createActivity(makeActivity("a3", device: "tablet") {
                $0.requiredUserInfoKeys = ["orderID"]
            })
            try store.becomeCurrent("a3")
        }
    }

    @Test("deleteSavedUserActivities removes by persistentIdentifier; ids that match nothing are fine")
    func deleteByPersistentIdentifier() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            for (index, pid) in ["p1", "p2", nil].enumerated() {
                try store.createActivity(makeActivity("a\(index)", device: "d\(index)") {
                    $0.eligibleForSearch = true
                    $0.persistentIdentifier = pid
                })
                try store.becomeCurrent("a\(index)")
            }
            #expect(try store.savedActivities().map(\.key) == ["a2", "p1", "p2"])
            let result = try store.deleteSavedUserActivities(withPersistentIdentifiers: ["p1", "nothing", "a2"])
            #expect(result.removedKeys == ["p1"])   // a2 is an activity id, not a persistentIdentifier
            #expect(try store.savedActivities().map(\.key) == ["a2", "p2"])
            let all = try store.deleteAllSavedUserActivities()
            #expect(all.removedKeys == ["a2", "p2"])
            #expect(try store.savedActivities().isEmpty)
            // The activities themselves are untouched.
            #expect(try store.currentActivities().count == 3)
        }
    }

    @Test("resolve finds a saved activity by persistentIdentifier, targetContentIdentifier or webpageURL")
    func resolveSaved() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") {
                $0.eligibleForSearch = true
                $0.persistentIdentifier = "order-42"
                $0.targetContentIdentifier = "target-42"
                $0.webpageURL = URL(string: "https://example.com/orders/42")!
            })
            try store.becomeCurrent("a1")
            for identifier in ["order-42", "target-42", "https://example.com/orders/42"] {
                guard case .saved(let saved) = try store.resolve(identifier) else {
                    Issue.record("\(identifier) did not resolve")
                    continue
                }
                #expect(saved.key == "order-42")
            }
            #expect(try store.resolve("never") == .unknown)
            #expect(try store.savedActivities(withWebpageURL: URL(string: "https://example.com/orders/42")!).count == 1)
        }
    }

    @Test("resolve of a deleted link names the deleting position and operation")
    func resolveRemoved() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") {
                $0.eligibleForSearch = true
                $0.persistentIdentifier = "order-42"
                $0.targetContentIdentifier = "target-42"
            })
            try store.createActivity(makeActivity("a2", device: "laptop") {
                $0.eligibleForSearch = true
                $0.webpageURL = URL(string: "https://example.com/b")!
            })
            try store.becomeCurrent("a1")
            try store.becomeCurrent("a2")
            let deletion = try store.deleteSavedUserActivities(withPersistentIdentifiers: ["order-42"], at: at(30))
            let position = try #require(deletion.positions?.lowerBound)
            for identifier in ["order-42", "target-42"] {
                guard case .removed(let removal) = try store.resolve(identifier) else {
                    Issue.record("\(identifier) should resolve to its removal")
                    continue
                }
                #expect(removal.position == position)
                #expect(removal.operation == ActivityEventCatalog.savedActivitiesDeleted)
                #expect(removal.key == "order-42")
                #expect(removal.removedAt == at(30))
            }
            let all = try store.deleteAllSavedUserActivities(at: at(40))
            guard case .removed(let removal) = try store.resolve("https://example.com/b") else {
                Issue.record("the URL should resolve to its removal")
                return
            }
            #expect(removal.position == all.positions?.lowerBound)
            #expect(removal.operation == ActivityEventCatalog.savedActivitiesAllDeleted)
            // Saving again makes it resolve again.
            try store.resignCurrent("a1")
            try store.becomeCurrent("a1")
            guard case .saved = try store.resolve("order-42") else {
                Issue.record("order-42 should resolve again")
                return
            }
        }
    }

    @Test("a newer copy under the same key without the old targetContentIdentifier records its removal")
    func resolveReplaced() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") {
                $0.eligibleForSearch = true
                $0.persistentIdentifier = "p"
                $0.targetContentIdentifier = "old"
            })
            try store.becomeCurrent("a1")
            var update = ActivityUpdate()
            update.targetContentIdentifier = "new"
            let result = try store.updateActivity("a1", update)
            guard case .removed(let removal) = try store.resolve("old") else {
                Issue.record("old should resolve to its removal")
                return
            }
            #expect(removal.operation == ActivityEventCatalog.activitySaved)
            #expect(removal.position == result.positions?.upperBound)
            guard case .saved = try store.resolve("new") else {
                Issue.record("new should resolve")
                return
            }
        }
    }
}
