import EventLog
import Foundation
import Testing
@testable import ActivityDomain

@Suite("Lifecycle rules of SPEC §3")
struct LifecycleTests {
    @Test("createActivity makes an inactive activity with Apple's defaults; an id in use is an error")
    func create() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1"))
            let record = try #require(try store.activity("a1"))
            #expect(record.state == .inactive)
            #expect(record.activity.eligibleForHandoff)
            #expect(!record.activity.eligibleForSearch && !record.activity.eligibleForPrediction && !record.activity.eligibleForPublicIndexing)
            #expect(record.activity.userInfo.isEmpty && record.activity.keywords.isEmpty)
            try expectRejected(.activityAlreadyExists, by: store) { try store.createActivity(makeActivity("a1", device: "laptop")) }
            try store.invalidate("a1")
            try expectRejected(.activityAlreadyExists, by: store) { try store.createActivity(makeActivity("a1")) }
        }
    }

    @Test("activity types must be declared and reverse-DNS")
    func activityTypes() throws {
        try withStore { store in
            try expectRejected(.undeclaredActivityType, by: store) { try store.createActivity(makeActivity("a1")) }
            for bad in ["viewOrder", "com..app", "com.example.app.", ".com.example", "com.exa mple.app", "com.example.app.ü"] {
                try expectRejected(.malformedActivityType, by: store) { try store.declareActivityTypes([bad]) }
            }
            // One bad type rejects the whole declaration.
            try expectRejected(.malformedActivityType, by: store) { try store.declareActivityTypes([viewOrder, "bad"]) }
            #expect(try store.declaredActivityTypes().isEmpty)
            let first = try store.declareActivityTypes([viewOrder, editOrder, viewOrder])
            #expect(first.eventTypes == [ActivityEventCatalog.activityTypesDeclared])
            try expectNoChange(store) { try store.declareActivityTypes([viewOrder]) }
            #expect(try store.declaredActivityTypes() == [editOrder, viewOrder])
            try store.createActivity(makeActivity("a1"))
        }
    }

    @Test("identifiers: empty or longer than 256 UTF-8 bytes are rejected")
    func identifiers() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try expectRejected(.identifierEmpty, by: store) { try store.createActivity(makeActivity("")) }
            try expectRejected(.identifierEmpty, by: store) { try store.createActivity(makeActivity("a1", device: "")) }
            let long = String(repeating: "é", count: 129)   // 258 bytes
            try expectRejected(.identifierTooLong, by: store) { try store.createActivity(makeActivity(long)) }
            try expectRejected(.identifierTooLong, by: store) {
                try store.createActivity(makeActivity("a1") { $0.persistentIdentifier = long })
            }
            try expectRejected(.identifierTooLong, by: store) { try store.becomeCurrent(long) }
            try expectRejected(.identifierTooLong, by: store) { try store.deleteSavedUserActivities(withPersistentIdentifiers: [long]) }
            try store.createActivity(makeActivity(String(repeating: "é", count: 128)))   // 256 bytes: fine
        }
    }

    @Test("at most one activity is current per device; two devices keep one each")
    func supersessionPerDevice() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1", device: "phone"))
            try store.createActivity(makeActivity("a2", device: "phone"))
            try store.createActivity(makeActivity("b1", device: "laptop"))
            try store.becomeCurrent("a1", at: at(1))
            try store.becomeCurrent("b1", at: at(2))
            let result = try store.becomeCurrent("a2", at: at(3))
            #expect(result.superseded == "a1")
            #expect(try store.activity("a1")?.state == .inactive)
            #expect(try store.activity("a2")?.state == .current)
            #expect(try store.activity("b1")?.state == .current)
            let current = try store.currentActivities()
            #expect(current.map(\.device) == ["laptop", "phone"])
            #expect(current.map(\.activity.activity) == ["b1", "a2"])
            #expect(try store.currentActivity(onDevice: "phone")?.becameCurrentAt == at(3))
            // The event names what it superseded, for an auditor.
            let event = try #require(try store.eventStore.event(at: result.positions!.lowerBound))
            #expect(event.type == ActivityEventCatalog.activityBecameCurrent)
            let json = try #require(try ActivityEventCatalog.json(of: event))
            #expect(json.contains("\"superseded\":\"a1\""))
        }
    }

    @Test("becomeCurrent on a current activity changes nothing")
    func alreadyCurrent() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1"))
            try store.becomeCurrent("a1", at: at(1))
            try expectNoChange(store) { try store.becomeCurrent("a1", at: at(2)) }
            #expect(try store.currentActivity(onDevice: "phone")?.becameCurrentAt == at(1))
        }
    }

    @Test("resignCurrent makes a current activity inactive; on an inactive one it changes nothing")
    func resign() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1"))
            try expectNoChange(store) { try store.resignCurrent("a1") }
            try store.becomeCurrent("a1")
            let result = try store.resignCurrent("a1")
            #expect(result.eventTypes == [ActivityEventCatalog.activityResignedCurrent])
            #expect(try store.activity("a1")?.state == .inactive)
            #expect(try store.currentActivity(onDevice: "phone") == nil)
            try expectNoChange(store) { try store.resignCurrent("a1") }
            try expectRejected(.unknownActivity, by: store) { try store.resignCurrent("nope") }
        }
    }

    @Test("invalidated is final: no longer current, every other operation is an error, invalidating twice changes nothing")
    func invalidatedIsFinal() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1"))
            try store.becomeCurrent("a1")
            try store.invalidate("a1")
            #expect(try store.activity("a1")?.state == .invalidated)
            #expect(try store.currentActivities().isEmpty)
            try expectRejected(.activityInvalidated, by: store) { try store.becomeCurrent("a1") }
            try expectRejected(.activityInvalidated, by: store) { try store.resignCurrent("a1") }
            try expectRejected(.activityInvalidated, by: store) {
                var update = ActivityUpdate()
                update.title = "x"
                try store.updateActivity("a1", update)
            }
            try expectRejected(.activityInvalidated, by: store) { try store.addUserInfoEntries(["k": 1], to: "a1") }
            try expectNoChange(store) { try store.invalidate("a1") }
            try expectRejected(.unknownActivity, by: store) { try store.invalidate("nope") }
        }
    }

    @Test("invalidating an activity that is not current leaves the device's current one alone")
    func invalidateInactive() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1"))
            try store.createActivity(makeActivity("a2"))
            try store.becomeCurrent("a1")
            try store.invalidate("a2")
            #expect(try store.currentActivity(onDevice: "phone")?.activity.activity == "a1")
        }
    }

    @Test("unknown activities are errors for every operation")
    func unknownActivity() throws {
        try withStore { store in
            try expectRejected(.unknownActivity, by: store) { try store.becomeCurrent("x") }
            try expectRejected(.unknownActivity, by: store) { try store.updateActivity("x", ActivityUpdate()) }
            try expectRejected(.unknownActivity, by: store) { try store.addUserInfoEntries(["k": 1], to: "x") }
        }
    }

    @Test("updateActivity replaces userInfo; addUserInfoEntries merges")
    func mergeVersusReplace() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") { $0.userInfo = ["a": 1, "b": "two"] })
            try store.addUserInfoEntries(["b": 2, "c": [true, nil]], to: "a1")
            #expect(try store.activity("a1")?.activity.userInfo == ["a": 1, "b": 2, "c": [true, nil]])
            var update = ActivityUpdate()
            update.userInfo = ["z": 26.5]
            let result = try store.updateActivity("a1", update)
            #expect(result.eventTypes == [ActivityEventCatalog.activityUpdated])
            #expect(try store.activity("a1")?.activity.userInfo == ["z": 26.5])
            try expectNoChange(store) { try store.addUserInfoEntries(["z": 26.5], to: "a1") }
            try expectNoChange(store) { try store.updateActivity("a1", update) }
        }
    }

    @Test("updateActivity sets and clears properties and records which changed")
    func updateProperties() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") {
                $0.title = "Latte"
                $0.targetContentIdentifier = "t1"
            })
            var update = ActivityUpdate()
            update.title = "Oat latte"
            update.keywords = ["coffee", "oat"]
            update.targetContentIdentifier = .some(nil)
            let result = try store.updateActivity("a1", update)
            let activity = try #require(try store.activity("a1")?.activity)
            #expect(activity.title == "Oat latte")
            #expect(activity.keywords == ["coffee", "oat"])
            #expect(activity.targetContentIdentifier == nil)
            let json = try #require(try ActivityEventCatalog.json(of: store.eventStore.event(at: result.positions!.lowerBound)!))
            #expect(json.contains("\"changedProperties\":[\"keywords\",\"targetContentIdentifier\",\"title\"]"))
        }
    }

    @Test("webpageURL must be http or https")
    func webpageURLSchemes() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            for (index, bad) in ["ftp://example.com/x", "file:///etc/passwd", "mailto:a@example.com", "javascript:alert(1)"].enumerated() {
                try expectRejected(.invalidWebpageURL, by: store) {
                    try store.createActivity(makeActivity("bad\(index)") { $0.webpageURL = URL(string: bad)! })
                }
            }
            try store.createActivity(makeActivity("a1") { $0.webpageURL = URL(string: "http://example.com/a")! })
            try store.createActivity(makeActivity("a2") { $0.webpageURL = URL(string: "HTTPS://example.com/a")! })
            var update = ActivityUpdate()
            update.webpageURL = URL(string: "ftp://example.com/x")!
            try expectRejected(.invalidWebpageURL, by: store) { try store.updateActivity("a1", update) }
        }
    }

    @Test("public indexing needs webpageURL or requiredUserInfoKeys")
    func publicIndexing() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try expectRejected(.publicIndexingRequiresWebpageURLOrRequiredKeys, by: store) {
                try store.createActivity(makeActivity("a0") { $0.eligibleForPublicIndexing = true })
            }
            try expectRejected(.publicIndexingRequiresWebpageURLOrRequiredKeys, by: store) {
                try store.createActivity(makeActivity("a0") {
                    $0.eligibleForPublicIndexing = true
                    $0.requiredUserInfoKeys = []
                })
            }
            try store.createActivity(makeActivity("a1") {
                $0.eligibleForPublicIndexing = true
                $0.webpageURL = URL(string: "https://example.com/orders/1")!
            })
            try store.createActivity(makeActivity("a2") {
                $0.eligibleForPublicIndexing = true
                $0.requiredUserInfoKeys = ["orderID"]
            })
            // An update may not take away what public indexing needs.
            var update = ActivityUpdate()
            update.webpageURL = .some(nil)
            try expectRejected(.publicIndexingRequiresWebpageURLOrRequiredKeys, by: store) { try store.updateActivity("a1", update) }
        }
    }

    @Test("a batch applies all of its commands or none")
    func batchAllOrNothing() throws {
        try withStore { store in
            let results = try store.write([
                .declareActivityTypes([viewOrder]),
                .createActivity(makeActivity("a1")),
                .becomeCurrent("a1"),
            ], at: at(5))
            #expect(results.map(\.operation) == ["declareActivityTypes", "createActivity", "becomeCurrent"])
            let head = try store.head()
            do {
                try store.write([.createActivity(makeActivity("a2")), .becomeCurrent("a2"), .becomeCurrent("nope")])
                Issue.record("the batch should have been rejected")
            } catch let error as ActivityError {
                #expect(error.code == .unknownActivity)
                #expect(error.commandIndex == 2)
            }
            #expect(try store.head() == head)
            #expect(try store.activity("a2") == nil)
            #expect(try store.currentActivity(onDevice: "phone")?.activity.activity == "a1")
            // Commands with their own times record them.
            let timed = try store.write([ActivityCommand.Timed(.createActivity(makeActivity("a3")), at: at(100))])
            #expect(try store.eventStore.event(at: timed[0].positions!.lowerBound)?.appendedAt == at(100))
        }
    }

    @Test("errors name the operation, the field, the value and what is allowed")
    func errorDescription() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            do {
                try store.createActivity(makeActivity("a1") { $0.webpageURL = URL(string: "ftp://example.com")! })
            } catch let error as ActivityError {
                #expect(error.operation == "createActivity")
                #expect(error.field == "webpageURL")
                #expect(error.value == "ftp://example.com")
                #expect(error.description.contains("http or https"))
            }
        }
    }
}
