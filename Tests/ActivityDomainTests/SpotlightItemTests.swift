import EventLog
import Foundation
import Testing
import TextIndex
@testable import ActivityDomain

@Suite("Core Spotlight items (SPEC §4)")
struct SpotlightItemTests {
    @Test("indexed items are listed by identifier, by domain, with their attributes")
    func listing() throws {
        try withReopenedSpotlightStore { store in
            let result = try store.indexSearchableItems([
                makeItem("b", domain: "orders", title: "Latte", keywords: ["coffee"]) { $0.attributeSet.rating = 4 },
                makeItem("a", title: "Tea"),
                makeItem("c", domain: "orders.2024", title: "Mocha"),
            ], at: at(0))
            #expect(result.eventTypes == [SpotlightEventCatalog.itemsIndexed])
            #expect(result.droppedUpdates.isEmpty)
            #expect(try store.items().map(\.uniqueIdentifier) == ["a", "b", "c"])
            let b = try #require(try store.item("b"))
            #expect(b.item.domainIdentifier == "orders")
            #expect(b.item.attributeSet.title == "Latte")
            #expect(b.item.attributeSet.keywords == ["coffee"])
            #expect(b.item.attributeSet.rating == 4)
            #expect(b.position == result.positions?.lowerBound)
            #expect(try store.items(inDomain: "orders").map(\.uniqueIdentifier) == ["b", "c"])
            #expect(try store.items(inDomain: "orders.2024").map(\.uniqueIdentifier) == ["c"])
            #expect(try store.item("zzz") == nil)
        }
    }

    @Test("an item replaces the item with its identifier: attributes not given are gone")
    func replace() throws {
        try withReopenedSpotlightStore { store in
            try store.indexSearchableItems([makeItem("x", domain: "orders", title: "Latte", keywords: ["coffee"])], at: at(0))
            try store.indexSearchableItems([makeItem("x") { $0.attributeSet.displayName = "Flat white" }], at: at(1))
            let x = try #require(try store.item("x")).item
            #expect(x.attributeSet.title == nil)
            #expect(x.attributeSet.keywords.isEmpty)
            #expect(x.domainIdentifier == nil)
            #expect(x.attributeSet.displayName == "Flat white")
            #expect(try store.search("coffee", now: at(2), after: try store.head()).isEmpty)
            #expect(try ids(store.search("flat", now: at(2), after: try store.head())) == ["x"])
            #expect(try store.items(inDomain: "orders").isEmpty)
        }
    }

    @Test("isUpdate merges: given attributes replace, null ones are removed, the others stay")
    func merge() throws {
        try withReopenedSpotlightStore { store in
            let expiration = at(86_400)
            try store.indexSearchableItems([makeItem("x", domain: "orders", title: "Latte", keywords: ["coffee"]) {
                $0.attributeSet.comment = "hot"
                $0.expirationDate = expiration
            }], at: at(0))
            let update = try SearchableItem(json: JSONValue(parsing:
                #"{"uniqueIdentifier":"x","isUpdate":true,"attributeSet":{"title":"Oat latte","keywords":null,"rating":5}}"#))
            #expect(update.attributesToRemove == ["keywords"])
            let result = try store.indexSearchableItems([update], at: at(1))
            #expect(result.droppedUpdates.isEmpty)
            let x = try #require(try store.item("x"))
            #expect(x.item.attributeSet.title == "Oat latte")
            #expect(x.item.attributeSet.keywords.isEmpty)
            #expect(x.item.attributeSet.rating == 5)
            #expect(x.item.attributeSet.comment == "hot")
            #expect(x.item.domainIdentifier == "orders")
            #expect(x.item.expirationDate == expiration)
            #expect(x.firstPosition < x.position)
            // The index follows: the removed keyword no longer finds it, the kept comment does.
            #expect(try store.search("coffee", now: at(2), after: try store.head()).isEmpty)
            #expect(try ids(store.search("hot", now: at(2), after: try store.head())) == ["x"])
            #expect(try ids(store.query("rating == 5", now: at(2), after: try store.head())) == ["x"])
            // The event carries the final state and what the update set and removed.
            let position = try #require(result.positions?.lowerBound)
            let event = try #require(try store.eventStore.event(at: position))
            let json = try #require(try ActivityEventCatalog.json(of: event))
            #expect(json.contains("\"Oat latte\"") && json.contains("INDEX_OUTCOME_MERGED") && json.contains("\"removedAttributes\":[\"keywords\"]"))
        }
    }

    @Test("an update of a missing item is dropped, and the result and the event say so")
    func updateOfMissingItem() throws {
        try withReopenedSpotlightStore { store in
            let result = try store.indexSearchableItems([
                makeItem("ghost", title: "Boo") { $0.isUpdate = true },
                makeItem("real", title: "Here"),
            ], at: at(0))
            #expect(result.droppedUpdates == ["ghost"])
            #expect(try store.item("ghost") == nil)
            #expect(try store.items().map(\.uniqueIdentifier) == ["real"])
            #expect(try store.search("boo", now: at(1), after: try store.head()).isEmpty)
            let position = try #require(result.positions?.lowerBound)
            let event = try #require(try store.eventStore.event(at: position))
            #expect(try #require(try SpotlightEventCatalog.json(of: event)).contains("\"droppedUpdates\":[\"ghost\"]"))
            // Only dropped updates: still one event, so the log says the request came and did nothing.
            let only = try store.indexSearchableItems([makeItem("ghost2") { $0.isUpdate = true }], at: at(2))
            #expect(only.droppedUpdates == ["ghost2"])
            #expect(only.changed)
        }
    }

    @Test("an update after the item's index in the same command merges into it")
    func updateWithinOneCommand() throws {
        try withReopenedSpotlightStore { store in
            let result = try store.indexSearchableItems([
                makeItem("n", title: "New", keywords: ["one"]),
                makeItem("n") { $0.isUpdate = true; $0.attributeSet.comment = "merged" },
            ], at: at(0))
            #expect(result.droppedUpdates.isEmpty)
            let n = try #require(try store.item("n")).item
            #expect(n.attributeSet.title == "New" && n.attributeSet.comment == "merged" && n.attributeSet.keywords == ["one"])
        }
    }

    @Test("identifiers: required, non-empty, at most 256 UTF-8 bytes")
    func identifiers() throws {
        try withReopenedSpotlightStore { store in
            try expectRejected(.identifierEmpty, by: store) { try store.indexSearchableItems([makeItem("")]) }
            let tooLong = String(repeating: "é", count: 129)   // 258 bytes
            try expectRejected(.identifierTooLong, by: store) { try store.indexSearchableItems([makeItem(tooLong)]) }
            try expectRejected(.identifierTooLong, by: store) { try store.deleteSearchableItems(withIdentifiers: [tooLong]) }
            // One bad item rejects the whole command.
            try expectRejected(.identifierEmpty, by: store) { try store.indexSearchableItems([makeItem("ok"), makeItem("")]) }
            #expect(try store.items().isEmpty)
            let longest = String(repeating: "é", count: 128)   // 256 bytes
            try store.indexSearchableItems([makeItem(longest, domain: String(repeating: "d", count: 256), title: "long")])
            #expect(try store.item(longest) != nil)
            #expect(try store.items(inDomain: String(repeating: "d", count: 256)).map(\.uniqueIdentifier) == [longest])
            #expect(try ids(store.search("long", now: at(1), after: try store.head())) == [longest])
            do {
                try store.indexSearchableItems([makeItem("")])
            } catch let error as ActivityError {
                #expect(error.operation == "indexSearchableItems" && error.field == "uniqueIdentifier")
                #expect(error.allowed == "1 to 256 UTF-8 bytes")
            }
        }
    }

    @Test("domains: dot-separated components, none empty")
    func domains() throws {
        try withReopenedSpotlightStore { store in
            for bad in ["", ".orders", "orders.", "orders..2024", "."] {
                try expectRejected(.malformedDomainIdentifier, by: store) {
                    try store.indexSearchableItems([makeItem("x", domain: bad)])
                }
                try expectRejected(.malformedDomainIdentifier, by: store) {
                    try store.deleteSearchableItems(withDomainIdentifiers: [bad])
                }
            }
            do {
                try store.indexSearchableItems([makeItem("x", domain: "a..b")])
            } catch let error as ActivityError {
                #expect(error.field == "domainIdentifier" && error.value == "a..b")
                #expect(error.description.contains("indexSearchableItems") && error.description.contains("none empty"))
            }
            try store.indexSearchableItems([makeItem("x", domain: "orders.2024.q1")])
        }
    }

    @Test("unknown attribute names are an error that lists the known ones")
    func unknownAttributes() throws {
        for json in [#"{"uniqueIdentifier":"x","attributeSet":{"colour":"red"}}"#,
                     #"{"uniqueIdentifier":"x","isUpdate":true,"attributeSet":{"colour":null}}"#] {
            do {
                _ = try SearchableItem(json: JSONValue(parsing: json))
                Issue.record("accepted \(json)")
            } catch let error as ActivityError {
                #expect(error.code == .unknownAttribute)
                #expect(error.value == "colour")
                #expect(error.allowed?.contains("title, displayName, contentDescription, keywords") == true)
            }
        }
        try withReopenedSpotlightStore { store in
            try expectRejected(.unknownAttribute, by: store) {
                try store.indexSearchableItems([makeItem("x") { $0.isUpdate = true; $0.attributesToRemove = ["colour"] }])
            }
            try expectRejected(.invalidValue, by: store) {
                try store.indexSearchableItems([makeItem("x") { $0.attributeSet.rating = .nan }])
            }
        }
    }

    @Test("the JSON form of SPEC §6 and §7 round-trips")
    func json() throws {
        let line = #"{"uniqueIdentifier":"order-1","domainIdentifier":"orders","attributeSet":{"title":"Latte","keywords":["coffee"],"rating":4.5},"expirationDate":"2026-12-31T00:00:00Z"}"#
        let item = try SearchableItem(json: JSONValue(parsing: line))
        #expect(item.uniqueIdentifier == "order-1" && item.domainIdentifier == "orders" && !item.isUpdate)
        #expect(item.attributeSet.keywords == ["coffee"] && item.attributeSet.rating == 4.5)
        #expect(item.expirationDate == ISO8601Time.date(from: "2026-12-31T00:00:00Z"))
        #expect(item.json.serialized() == #"{"attributeSet":{"keywords":["coffee"],"rating":4.5,"title":"Latte"},"domainIdentifier":"orders","expirationDate":"2026-12-31T00:00:00Z","uniqueIdentifier":"order-1"}"#)
        for bad in [#"{"attributeSet":{}}"#, #"{"uniqueIdentifier":"x","extra":1}"#, #"{"uniqueIdentifier":"x","isUpdate":"yes"}"#] {
            #expect(throws: ActivityError.self) { try SearchableItem(json: JSONValue(parsing: bad)) }
        }
    }

    @Test("deleting a domain removes it and the domains below it, component by component")
    func domainDeletion() throws {
        try withReopenedSpotlightStore { store in
            try store.indexSearchableItems([
                makeItem("1", domain: "orders", title: "one"),
                makeItem("2", domain: "orders.2024", title: "two"),
                makeItem("3", domain: "orders.2024.q1", title: "three"),
                makeItem("4", domain: "orders2024", title: "four"),
                makeItem("5", domain: "misc.orders", title: "five"),
                makeItem("6", title: "six"),
            ], at: at(0))
            #expect(try store.items(inDomain: "orders").map(\.uniqueIdentifier) == ["1", "2", "3"])
            let narrow = try store.deleteSearchableItems(withDomainIdentifiers: ["orders.2024"], at: at(1))
            #expect(narrow.removedItems == ["2", "3"])
            #expect(try store.items().map(\.uniqueIdentifier) == ["1", "4", "5", "6"])
            let wide = try store.deleteSearchableItems(withDomainIdentifiers: ["orders", "nothing.here"], at: at(2))
            #expect(wide.removedItems == ["1"])
            #expect(try store.items().map(\.uniqueIdentifier) == ["4", "5", "6"])
            #expect(try ids(store.query(#"kind == "item""#, now: at(3), after: try store.head())) == ["4", "5", "6"])
            #expect(try store.search("one", now: at(3), after: try store.head()).isEmpty)
        }
    }

    @Test("deleting by identifier: unknown identifiers are fine, the event lists what was removed")
    func deletion() throws {
        try withReopenedSpotlightStore { store in
            try store.indexSearchableItems([makeItem("a", title: "alpha"), makeItem("b", title: "bravo")], at: at(0))
            let result = try store.deleteSearchableItems(withIdentifiers: ["b", "nope", "b"], at: at(1))
            #expect(result.removedItems == ["b"])
            #expect(result.eventTypes == [SpotlightEventCatalog.itemsDeleted])
            #expect(try store.items().map(\.uniqueIdentifier) == ["a"])
            #expect(try store.search("bravo", now: at(2), after: try store.head()).isEmpty)
            let none = try store.deleteSearchableItems(withIdentifiers: ["nope"], at: at(3))
            #expect(none.removedItems.isEmpty && none.changed)
            try expectNoChange(store) { try store.deleteSearchableItems(withIdentifiers: []) }
        }
    }

    @Test("default expiration: one calendar month after indexing, UTC, clamped to the month's last day")
    func defaultExpiration() throws {
        func month(_ from: String) -> String {
            ISO8601Time.string(from: SpotlightRules.defaultExpiration(indexedAt: ISO8601Time.date(from: from)!))
        }
        #expect(month("2026-01-31T10:00:00Z") == "2026-02-28T10:00:00Z")
        #expect(month("2028-01-31T23:59:59.5Z") == "2028-02-29T23:59:59.5Z")
        #expect(month("2026-03-31T00:00:00Z") == "2026-04-30T00:00:00Z")
        #expect(month("2026-12-15T08:30:00Z") == "2027-01-15T08:30:00Z")
        #expect(month("2026-11-22T10:00:00Z") == "2026-12-22T10:00:00Z")
        #expect(month("1969-12-31T23:00:00Z") == "1970-01-31T23:00:00Z")
        try withReopenedSpotlightStore { store in
            let jan31 = ISO8601Time.date(from: "2026-01-31T10:00:00Z")!
            try store.indexSearchableItems([makeItem("d", title: "default"), makeItem("e", title: "explicit") {
                $0.expirationDate = ISO8601Time.date(from: "2030-01-01T00:00:00Z")
            }], at: jan31)
            let d = try #require(try store.item("d"))
            #expect(d.item.expirationDate == ISO8601Time.date(from: "2026-02-28T10:00:00Z"))
            #expect(d.hasDefaultExpiration)
            let e = try #require(try store.item("e"))
            #expect(e.item.expirationDate == ISO8601Time.date(from: "2030-01-01T00:00:00Z"))
            #expect(!e.hasDefaultExpiration)
            // The event records the computed date: the projection never computes it.
            let event = try #require(try store.eventStore.event(at: d.position))
            #expect(try #require(try SpotlightEventCatalog.json(of: event)).contains("\"defaultExpiration\":true"))
            // A leap year.
            try store.indexSearchableItems([makeItem("leap")], at: ISO8601Time.date(from: "2028-01-31T00:00:00Z")!)
            #expect(try store.item("leap")?.item.expirationDate == ISO8601Time.date(from: "2028-02-29T00:00:00Z"))
        }
    }

    @Test("expiry is a filter at now: expired items leave search and query results at their expiration instant")
    func expiry() throws {
        try withReopenedSpotlightStore { store in
            let expiration = at(100)
            try store.indexSearchableItems([makeItem("x", title: "Latte") { $0.expirationDate = expiration },
                                            makeItem("y", title: "Latte too")], at: at(0))
            #expect(try ids(store.search("latte", now: at(99), after: try store.head())).sorted() == ["x", "y"])
            #expect(try ids(store.query(#"title == "latte*"c"#, now: at(99), after: try store.head())) == ["x", "y"])
            #expect(try ids(store.search("latte", now: expiration, after: try store.head())) == ["y"])
            #expect(try ids(store.query(#"title == "latte*"c"#, now: expiration, after: try store.head())) == ["y"])
            #expect(try ids(store.query("expirationDate <= $time.now", now: expiration, after: try store.head())).isEmpty)
            // Still listed until purged.
            #expect(try store.item("x") != nil)
        }
    }

    @Test("purgeExpired appends the removal of everything expired at now")
    func purge() throws {
        try withReopenedSpotlightStore { store in
            try store.indexSearchableItems([
                makeItem("early") { $0.expirationDate = at(10) },
                makeItem("exact") { $0.expirationDate = at(20) },
                makeItem("late") { $0.expirationDate = at(30) },
                makeItem("default"),
            ], at: at(0))
            let head = try store.head()
            let result = try store.purgeExpired(now: at(20), at: at(25))
            #expect(result.removedItems == ["early", "exact"])
            #expect(result.eventTypes == [SpotlightEventCatalog.expiredItemsPurged])
            #expect(try store.head() == head + 1)
            #expect(try store.items().map(\.uniqueIdentifier) == ["default", "late"])
            let event = try #require(try store.eventStore.event(at: head + 1))
            #expect(event.appendedAt == at(25))
            // Nothing more expired: nothing appended.
            try expectNoChange(store) { try store.purgeExpired(now: at(20)) }
            // The default expiration, one month later.
            let months = try store.purgeExpired(now: ISO8601Time.date(from: "2027-01-01T00:00:00Z")!)
            #expect(months.removedItems == ["default", "late"])
            #expect(try store.items().isEmpty)
        }
    }

    @Test("deleteAllSearchableItems removes every item and forgets every client state, but not saved activities")
    func deleteAll() throws {
        try withReopenedSpotlightStore { store in
            try store.indexBatch(index: "orders", clientState: Data("1".utf8)) { batch in
                batch.indexSearchableItems([makeItem("a", title: "alpha"), makeItem("b", domain: "x", title: "bravo")])
            }
            try store.indexBatch(index: "other", clientState: Data("9".utf8)) { _ in }
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("a1") { $0.title = "alpha activity"; $0.eligibleForSearch = true })
            try store.becomeCurrent("a1")
            #expect(try store.clientStates().map(\.index) == ["orders", "other"])
            let result = try store.deleteAllSearchableItems(at: at(5))
            #expect(result.removedItems == ["a", "b"])
            #expect(try store.items().isEmpty)
            #expect(try store.fetchLastClientState(index: "orders") == nil)
            #expect(try store.fetchLastClientState(index: "other") == nil)
            #expect(try store.clientStates().isEmpty)
            #expect(try store.search("alpha", now: at(6), after: try store.head()).map(\.kind) == ["activity"])
            // On an empty store it still records the request.
            #expect(try store.deleteAllSearchableItems().changed)
        }
    }
}
