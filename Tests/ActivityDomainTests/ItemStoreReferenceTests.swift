import EventLog
import Foundation
import LMDB
import SwiftProtobuf
import TextIndex
import Testing
@testable import ActivityDomain

/// The item store keeps where an item's bytes are in the log, not the item
/// (`Docs/Architecture.md`, "Text kept once").
@Suite("The item store refers to the log")
struct ItemStoreReferenceTests {
    @Test("an item's text is kept once: its record stays small, and the item reads back whole, after a rebuild too")
    func textKeptOnce() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let description = String(repeating: "Long description of a latte, word after word. ", count: 400)
        do {
            let store = try ActivityStore(path: path, options: testOptions())
            try store.indexSearchableItems([
                makeItem("a", domain: "orders", title: "Latte") { $0.attributeSet.contentDescription = description },
                makeItem("b", title: "Tea"),
            ], at: at(0))
            try store.indexSearchableItems([makeItem("c", title: "Mocha") { $0.attributeSet.contentDescription = description }], at: at(1))
            let stored = try store.eventStore.read { txn in
                try store.views.items.records.withValue(forKey: Array("a".utf8), prefix: SpaceKey.prefix(of: 0), in: txn) { $0.count }
            }
            #expect(description.utf8.count > 18_000)
            #expect(try #require(stored) < 100, "the record holds the item's text")
            #expect(try store.item("a")?.item.attributeSet.contentDescription == description)
            #expect(try store.item("c")?.item.attributeSet.contentDescription == description)
            #expect(try store.items(inDomain: "orders").map(\.uniqueIdentifier) == ["a"])
            #expect(try store.eventStore.verifyViews(full: true).isEqual)
            try store.eventStore.rebuild(full: true)
            #expect(try store.item("a")?.item.attributeSet.contentDescription == description)
        }
        var options = testOptions()
        options.store.readOnly = true
        let readOnly = try ActivityStore(path: path, options: options)
        #expect(try readOnly.items().map(\.uniqueIdentifier) == ["a", "b", "c"])
        #expect(try readOnly.item("c")?.item.attributeSet.title == "Mocha")
    }

    @Test("a replaced or merged item reads what its own event wrote, not an older event's bytes")
    func replacedAndMerged() throws {
        try withReopenedSpotlightStore { store in
            try store.indexSearchableItems([makeItem("x", domain: "orders", title: "Latte"), makeItem("y", title: "Tea")], at: at(0))
            try store.indexSearchableItems([makeItem("x", title: "Flat white")], at: at(1))
            let update = try SearchableItem(json: JSONValue(parsing: #"{"uniqueIdentifier":"y","isUpdate":true,"attributeSet":{"rating":5}}"#))
            try store.indexSearchableItems([update], at: at(2))
            let x = try #require(try store.item("x"))
            #expect(x.item.attributeSet.title == "Flat white")
            #expect(x.item.domainIdentifier == nil)
            let y = try #require(try store.item("y"))
            #expect(y.item.attributeSet.title == "Tea")
            #expect(y.item.attributeSet.rating == 5)
            #expect(y.position == 3 && y.firstPosition == 1)
            #expect(try store.items(inDomain: "orders").isEmpty)
        }
    }

    @Test("the record keeps where the item is and its expiration relative to the default; time, domain and first position read back from the log")
    func recordKeepsOnlyTheReference() throws {
        try withReopenedSpotlightStore { store in
            try store.indexSearchableItems([makeItem("order-1", domain: "orders.2024", title: "Latte")], at: at(5))
            try store.indexSearchableItems([makeItem("order-1", domain: "orders.2025", title: "Mocha"),
                                            makeItem("order-2") { $0.expirationDate = at(100) }], at: at(9))
            func record(_ id: String) throws -> Activitylog_V1_SearchableItemRecord? {
                try store.eventStore.read { txn in
                    try store.views.items.records.withValue(forKey: Array(id.utf8), prefix: SpaceKey.prefix(of: 0), in: txn) {
                        try Activitylog_V1_SearchableItemRecord(serializedBytes: [UInt8]($0))
                    }
                }
            }
            let record1 = try #require(try record("order-1"))
            // Position, first position (another here), offset and length; the default expiration is no byte:
            // no time, no domain, no item.
            #expect(!record1.hasItem && record1.indexedAtMicros == 0 && !record1.hasDomainIdentifier)
            #expect(record1.firstPosition == 1 && record1.position == 2 && record1.expirationDateMicros == 0)
            let bytes: [UInt8] = try record1.serializedBytes()
            #expect(bytes.count < 14)
            // Another expiration is kept as its distance from the default of the event's time.
            let record2 = try #require(try record("order-2"))
            let defaultMicros = SpotlightRules.defaultExpiration(indexedAt: at(9)).eventMicroseconds
            #expect(record2.expirationDateMicros == at(100).eventMicroseconds - defaultMicros)
            #expect(try store.item("order-2")?.item.expirationDate == at(100))
            #expect(try store.purgeExpired(now: at(100)).removedItems == ["order-2"])
            let item = try #require(try store.item("order-1"))
            #expect(item.indexedAt == at(9) && item.position == 2 && item.firstPosition == 1)
            #expect(item.item.domainIdentifier == "orders.2025")
            #expect(try store.items(inDomain: "orders").map(\.uniqueIdentifier) == ["order-1"])
            #expect(try store.items(inDomain: "orders.2024").isEmpty)
            try store.deleteSearchableItems(withDomainIdentifiers: ["orders.2025"])
            #expect(try store.items().isEmpty)
            #expect(try store.eventStore.verifyViews(full: true).isEqual)
        }
    }

    @Test("the expiration index holds one entry per event and expiration, time then position, appended in log order; a purge reads each item's user and identifier from its event")
    func expirationEntriesPerEvent() throws {
        try withReopenedSpotlightStore { store in
            // Three users' items in one write: they share its default expiration.
            try store.write([
                .init(.indexSearchableItems([makeItem("z-1"), makeItem("a-2")]), user: "carol"),
                .init(.indexSearchableItems([makeItem("m-3")]), user: "alice"),
                .init(.indexSearchableItems([makeItem("b-4") { $0.expirationDate = at(50) }]), user: "bob"),
                .init(.indexSearchableItems([makeItem("c-5")])),
            ], at: at(10))
            try store.user("alice").indexSearchableItems([makeItem("m-3", title: "again")], at: at(20))
            let entries = try expirationEntries(store)
            // bob's explicit expiration first; then the default ones by position: carol's two items in one
            // entry, the default space's, and alice's replaced item under its new event (the old entry is gone).
            #expect(entries.map(\.key.position) == [3, 1, 4, 5])
            #expect(entries.map(\.parts.count) == [1, 2, 1, 1])
            #expect(entries[1].key.micros == entries[2].key.micros && entries[1].key.micros < entries[3].key.micros)
            #expect(try store.user("bob").purgeExpired(now: at(60)).removedItems == ["b-4"])
            let all = try store.purgeExpired(now: ISO8601Time.date(from: "2027-01-01T00:00:00Z")!)
            #expect(all.removedItems == ["a-2", "c-5", "m-3", "z-1"])
            #expect(try store.user("carol").items().isEmpty && store.user("alice").items().isEmpty && store.items().isEmpty)
            #expect(try expirationEntries(store).isEmpty)
            #expect(try store.eventStore.verifyViews(full: true).isEqual)
        }
    }

    @Test("a replace or a delete takes one offset out of an event's shared expiration entry; a forget removes the user's entries, and a purge across users finds the rest")
    func expirationEntriesEdited() throws {
        try withReopenedSpotlightStore { store in
            let alice = store.user("alice"), bob = store.user("bob"), carol = store.user("carol")
            try alice.indexSearchableItems([makeItem("a-1"), makeItem("a-2"), makeItem("a-3")], at: at(0))
            try bob.indexSearchableItems([makeItem("b-1"), makeItem("b-2")], at: at(1))
            // One event, two explicit expirations: two entries of the same position.
            try carol.indexSearchableItems([
                makeItem("c-1") { $0.expirationDate = at(50) }, makeItem("c-2") { $0.expirationDate = at(60) },
                makeItem("c-3") { $0.expirationDate = at(50) },
            ], at: at(2))
            func shape() throws -> [String] { try expirationEntries(store).map { "\($0.key.position):\($0.parts.count)" } }
            #expect(try shape() == ["3:2", "3:1", "1:3", "2:2"])
            try alice.indexSearchableItems([makeItem("a-2", title: "replaced")], at: at(3))
            #expect(try shape() == ["3:2", "3:1", "1:2", "2:2", "4:1"])
            try alice.deleteSearchableItems(withIdentifiers: ["a-3"], at: at(4))
            #expect(try shape() == ["3:2", "3:1", "1:1", "2:2", "4:1"])
            #expect(try carol.purgeExpired(now: at(55)).removedItems == ["c-1", "c-3"])
            #expect(try shape() == ["3:1", "1:1", "2:2", "4:1"])
            #expect(try carol.items().map(\.uniqueIdentifier) == ["c-2"])
            _ = try store.forgetUser("bob", at: at(6))
            #expect(try shape() == ["3:1", "1:1", "4:1"])
            #expect(try store.eventStore.verifyViews(full: true).isEqual)
            let all = try store.purgeExpired(now: ISO8601Time.date(from: "2027-01-01T00:00:00Z")!)
            #expect(all.removedItems == ["a-1", "a-2", "c-2"])
            #expect(try expirationEntries(store).isEmpty && alice.items().isEmpty && carol.items().isEmpty)
            #expect(try store.eventStore.verifyViews(full: true).isEqual)
        }
    }

    /// The expiration index as stored: each key with the parts its value names.
    private func expirationEntries(_ store: ActivityStore) throws -> [(key: ExpirationKey, parts: [UInt32])] {
        try store.eventStore.read { txn in
            let db: Database<[UInt8], [UInt8]> = try txn.openDatabase("spotlight.itemsByExpiration")
            var entries: [(key: ExpirationKey, parts: [UInt32])] = []
            let cursor = try db.cursor(in: txn)
            var entry = try cursor.firstBytes()
            while let e = entry {
                entries.append((try #require(ExpirationKey(decoding: [UInt8](e.key))), try #require(DomainEntry.parts([UInt8](e.value)))))
                entry = try cursor.nextBytes()
            }
            return entries
        }
    }

    @Test("the domain index holds one entry per event and domain, naming its items' offsets; replaces and deletes take theirs out")
    func domainEntriesPerEvent() throws {
        try withReopenedSpotlightStore { store in
            let long = String(repeating: "d", count: 250)
            try store.indexSearchableItems([
                makeItem("n-1", domain: "notes"), makeItem("n-2", domain: "notes.work"), makeItem("n-3", domain: "notes"),
                makeItem("o-1", domain: "orders"), makeItem("x-1"), makeItem("l-1", domain: long + ".a"), makeItem("l-2", domain: long + "b"),
            ], at: at(0))
            func entries() throws -> [(domain: String, position: UInt64, parts: Int)] {
                try store.eventStore.read { txn in
                    let db: Database<[UInt8], [UInt8]> = try txn.openDatabase("spotlight.itemsByDomain")
                    var rows: [(domain: String, position: UInt64, parts: Int)] = []
                    let cursor = try db.cursor(in: txn)
                    var entry = try cursor.firstBytes()
                    while let e = entry {
                        let key = [UInt8](e.key)
                        let parts = try #require(DomainEntry.parts([UInt8](e.value)))
                        rows.append((String(decoding: key[4..<(key.count - 9)], as: UTF8.self),
                                     key.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, parts.count))
                        entry = try cursor.nextBytes()
                    }
                    return rows
                }
            }
            // Cut at 250 bytes, the two long domains share one key; the items tell them apart.
            #expect(try entries().map { "\($0.domain.prefix(5))@\($0.position):\($0.parts)" }
                    == ["ddddd@1:2", "notes@1:2", "notes@1:1", "order@1:1"])
            #expect(try store.items(inDomain: "notes").map(\.uniqueIdentifier) == ["n-1", "n-2", "n-3"])
            #expect(try store.items(inDomain: long).map(\.uniqueIdentifier) == ["l-1"])
            #expect(try store.items(inDomain: long + "b").map(\.uniqueIdentifier) == ["l-2"])
            try store.indexSearchableItems([makeItem("n-1", domain: "orders")], at: at(1))
            #expect(try entries().map { "\($0.domain.prefix(5))@\($0.position):\($0.parts)" }
                    == ["ddddd@1:2", "notes@1:1", "notes@1:1", "order@1:1", "order@2:1"])
            #expect(try store.items(inDomain: "orders").map(\.uniqueIdentifier) == ["n-1", "o-1"])
            try store.deleteSearchableItems(withDomainIdentifiers: ["notes", long])
            #expect(try entries().map { "\($0.domain.prefix(5))@\($0.position):\($0.parts)" } == ["ddddd@1:1", "order@1:1", "order@2:1"])
            #expect(try store.items().map(\.uniqueIdentifier) == ["l-2", "n-1", "o-1", "x-1"])
            #expect(try store.eventStore.verifyViews(full: true).isEqual)
        }
    }

    @Test("the slices of a payload decode to its items; an encoding that cannot be cut is refused")
    func slices() throws {
        var event = Activitylog_V1_SearchableItemsIndexed()
        for (i, title) in ["Latte", "", "Tea ☕︎"].enumerated() {
            var indexed = Activitylog_V1_IndexedItem()
            indexed.item.uniqueIdentifier = "id-\(i)"
            indexed.item.attributeSet.title = title
            indexed.outcome = .added
            indexed.setAttributes = ["title"]
            event.items.append(indexed)
        }
        event.droppedUpdates = ["gone"]
        event.user = "alice"
        let payload: [UInt8] = try event.serializedBytes()
        let slices = try #require(ItemSlices.find(in: payload))
        #expect(slices.count == 3)
        for (slice, indexed) in zip(slices, event.items) {
            #expect(try Activitylog_V1_SearchableItem(serializedBytes: Array(payload[slice])) == indexed.item)
        }
        // An IndexedItem whose item field occurs twice: a decoder merges the two, so no one slice is the item.
        let item: [UInt8] = try event.items[0].item.serializedBytes()
        let inner = [0x0A, UInt8(item.count)] + item + [0x0A, UInt8(item.count)] + item
        #expect(ItemSlices.find(in: [0x0A, UInt8(inner.count)] + inner) == nil)
        #expect(ItemSlices.find(in: Array(payload.dropLast())) == nil)
        #expect(ItemSlices.find(in: payload + [0x0F]) == nil)   // wire type 7 does not exist
        #expect(ItemSlices.find(in: []) == [])
    }
    @Test("records in pages: listings, lookups, replacements and deletes across many pages of two users; a forget takes one user's pages only; a rebuild writes the same pages")
    func recordsInPages() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore(path: path, options: testOptions())
        let alice = store.user("alice"), bob = store.user("bob")
        // 600 identifiers a user (about ten pages), written in batches of several sizes and orders.
        let ids = (0..<600).map { "item-\(($0 * 7_919) % 600)" }
        var start = 0
        for (n, size) in [1, 50, 200, 349].enumerated() {
            try alice.indexSearchableItems(ids[start..<(start + size)].map { makeItem($0, title: "a \($0)") }, at: at(Double(n)))
            try bob.indexSearchableItems(ids[start..<(start + size)].reversed().map { makeItem($0, title: "b \($0)") }, at: at(Double(n)))
            start += size
        }
        // Replaced (a first position kept) and deleted, spread over every page.
        try alice.indexSearchableItems(ids.prefix(100).map { makeItem($0, title: "again \($0)") }, at: at(10))
        let deleted = Set(ids.enumerated().filter { $0.offset % 3 == 1 }.map(\.element))
        #expect(try alice.deleteSearchableItems(withIdentifiers: deleted.sorted(), at: at(11)).removedItems.count == deleted.count)
        let left = ids.filter { !deleted.contains($0) }.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(try alice.items().map(\.uniqueIdentifier) == left)
        #expect(try bob.items().count == 600)
        #expect(try alice.item(ids[0])?.item.attributeSet.title == "again \(ids[0])")
        #expect(try alice.item(ids[1]) == nil)
        #expect(try bob.item(ids[1])?.item.attributeSet.title == "b \(ids[1])")
        #expect(try alice.items(withIdentifiers: [ids[0], ids[1], "item-none"]).map(\.uniqueIdentifier) == [ids[0]])
        #expect(try store.eventStore.verifyViews(full: true).isEqual)
        try store.forgetUser("bob", at: at(12))
        #expect(try bob.items().isEmpty)
        #expect(try alice.items().map(\.uniqueIdentifier) == left)
        let comparison = try store.eventStore.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
    }
}
