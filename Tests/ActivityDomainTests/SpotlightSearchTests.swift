import EventLog
import Foundation
import Testing
import TextIndex
@testable import ActivityDomain

@Suite("The keyword index over items and saved activities (SPEC §5)")
struct SpotlightSearchTests {
    @Test("items are found by free text and by the query language, as kind item")
    func items() throws {
        try withReopenedSpotlightStore { store in
            try store.indexSearchableItems([
                makeItem("order-1", domain: "orders", title: "Oat latte", keywords: ["coffee"]),
                makeItem("order-2", domain: "orders.2024") { $0.attributeSet.contentDescription = "A latte with oat milk" },
                makeItem("note", title: "Shopping") { $0.attributeSet.rating = 2 },
            ], at: at(0))
            let hits = try store.search("latte", now: at(1), after: try store.head())
            #expect(ids(hits) == ["order-1", "order-2"])   // title above description
            #expect(hits.allSatisfy { $0.kind == "item" && $0.score > 0 })
            #expect(try ids(store.search("oat lat", now: at(1), after: try store.head())) == ["order-1", "order-2"])
            #expect(try ids(store.search("latte", now: at(1), limit: 1, after: try store.head())) == ["order-1"])
            #expect(try ids(store.query(#"title == "latte*"cd && (keywords == "coffee"c || domainIdentifier == "orders")"#, now: at(1), after: try store.head())).isEmpty)
            #expect(try ids(store.query(#"title == "oat*"cd && (keywords == "coffee"c || domainIdentifier == "orders")"#, now: at(1), after: try store.head())) == ["order-1"])
            #expect(try ids(store.query(#"domainIdentifier == "orders*""#, now: at(1), after: try store.head())) == ["order-1", "order-2"])
            #expect(try ids(store.query("rating < 3", now: at(1), after: try store.head())) == ["note"])
            #expect(try ids(store.query(#"kind == "item""#, now: at(1), after: try store.head())) == ["note", "order-1", "order-2"])
            #expect(throws: QueryError.self) { try store.query("title = \"x\"", now: at(1), after: try store.head()) }
        }
    }

    @Test("saved activities eligible for search are found, as kind activity, and leave the index when deleted")
    func savedActivities() throws {
        try withReopenedSpotlightStore { store in
            try store.declareActivityTypes([viewOrder, editOrder])
            try store.createActivity(makeActivity("a1") {
                $0.title = "Oat latte order"
                $0.keywords = ["coffee"]
                $0.eligibleForSearch = true
                $0.persistentIdentifier = "order-42"
                var set = ContentAttributeSet()
                set.contentDescription = "Medium, extra hot"
                set.rating = 4
                $0.contentAttributeSet = set
            }, at: at(0))
            try store.createActivity(makeActivity("a2", device: "laptop", type: editOrder) {
                $0.title = "Latte for prediction only"
                $0.eligibleForPrediction = true
            }, at: at(0))
            try store.createActivity(makeActivity("a3", device: "tablet") {
                $0.title = "Latte not yet current"
                $0.eligibleForSearch = true
            }, at: at(0))
            try store.becomeCurrent("a1", at: at(1))
            try store.becomeCurrent("a2", at: at(1))
            try store.indexSearchableItems([makeItem("item-1", title: "Latte item")], at: at(1))

            let hits = try store.search("latte", now: at(2), after: try store.head())
            #expect(Set(hits.map { "\($0.kind):\($0.identifier)" }) == ["activity:order-42", "item:item-1"])
            #expect(try ids(store.search("extra hot", now: at(2), after: try store.head())) == ["order-42"])
            #expect(try ids(store.search("coffee", now: at(2), after: try store.head())) == ["order-42"])
            #expect(try ids(store.query(#"kind == "activity""#, now: at(2), after: try store.head())) == ["order-42"])
            #expect(try ids(store.query(#"activityType == "com.example.app.viewOrder""#, now: at(2), after: try store.head())) == ["order-42"])
            #expect(try store.query(#"activityType == "com.example.app.editOrder""#, now: at(2), after: try store.head()).isEmpty)
            #expect(try ids(store.query("rating >= 4", now: at(2), after: try store.head())) == ["order-42"])

            // Saved again without eligibleForSearch: the copy leaves the index.
            var predictionOnly = ActivityUpdate()
            predictionOnly.eligibleForSearch = false
            predictionOnly.eligibleForPrediction = true
            try store.updateActivity("a1", predictionOnly, at: at(3))
            #expect(try store.query(#"kind == "activity""#, now: at(4), after: try store.head()).isEmpty)
            var searchable = ActivityUpdate()
            searchable.eligibleForSearch = true
            try store.updateActivity("a1", searchable, at: at(5))
            #expect(try ids(store.query(#"kind == "activity""#, now: at(6), after: try store.head())) == ["order-42"])

            try store.deleteSavedUserActivities(withPersistentIdentifiers: ["order-42"], at: at(7))
            #expect(try store.query(#"kind == "activity""#, now: at(8), after: try store.head()).isEmpty)
            #expect(try ids(store.search("latte", now: at(8), after: try store.head())) == ["item-1"])

            try store.becomeCurrent("a3", at: at(9))
            #expect(try ids(store.query(#"kind == "activity""#, now: at(10), after: try store.head())) == ["a3"])
            try store.deleteAllSavedUserActivities(at: at(11))
            #expect(try store.query(#"kind == "activity""#, now: at(12), after: try store.head()).isEmpty)
            #expect(try ids(store.query(#"kind == "item""#, now: at(12), after: try store.head())) == ["item-1"])
        }
    }

    @Test("a saved activity's expiration date is honoured at now")
    func activityExpiry() throws {
        try withReopenedSpotlightStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") {
                $0.title = "Mocha"
                $0.eligibleForSearch = true
                $0.expirationDate = at(100)
            }, at: at(0))
            try store.becomeCurrent("a1", at: at(1))
            #expect(try ids(store.search("mocha", now: at(99), after: try store.head())) == ["a1"])
            #expect(try store.search("mocha", now: at(100), after: try store.head()).isEmpty)
            #expect(try ids(store.query("expirationDate == $time.now", now: at(99.5), after: try store.head())).isEmpty)
            #expect(try ids(store.query(#"InRange(expirationDate, $time.now, $time.now(10))"#, now: at(95), after: try store.head())) == ["a1"])
        }
    }
}
