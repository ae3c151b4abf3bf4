import EventLog
import Foundation
import Testing
import TextIndex
@testable import ActivityDomain

/// The value types' Codable: the shapes of Docs/Operations.md and
/// `eventlog --json`, through ActivityJSON and Foundation's coders.
@Suite("Codable")
struct CodableTests {
    /// The createActivity line of Docs/Operations.md's example.
    static let createLine = #"{"op":"createActivity","activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","user":"u1","title":"Latte","userInfo":{"orderID":42,"placed":{"$date":"2026-11-22T10:00:00Z"}},"eligibleForSearch":true,"persistentIdentifier":"order-42","keywords":["coffee"]}"#
    /// Its indexSearchableItems line.
    static let indexLine = #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"order-1","domainIdentifier":"orders.2026","attributeSet":{"title":"Latte","keywords":["coffee"],"rating":4.5}}]}"#

    /// `value` through ActivityJSON and back, and through Foundation's coders
    /// and back (exactly, unless the value holds an integer-valued double,
    /// which Foundation writes as an integer: then to the same document).
    func roundTrip<T: Codable & Equatable>(_ value: T, foundationExact: Bool = true,
                                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let text = try ActivityJSON.string(value)
        #expect(try ActivityJSON.decode(T.self, from: text) == value, "\(text)", sourceLocation: sourceLocation)
        let foundation = try JSONEncoder().encode(value)
        let back = try JSONDecoder().decode(T.self, from: foundation)
        if foundationExact {
            #expect(back == value, sourceLocation: sourceLocation)
        } else {
            #expect(try ActivityJSON.value(back).sortedForComparison == (try ActivityJSON.value(value)).sortedForComparison,
                    sourceLocation: sourceLocation)
        }
        // Both write the same document (Foundation's member order and number forms aside).
        #expect(try JSONValue(parsing: String(decoding: foundation, as: UTF8.self)).sortedForComparison
                    == (try JSONValue(parsing: text)).sortedForComparison, sourceLocation: sourceLocation)
    }

    @Test("the serializer escapes what JSON needs, writes other bytes as they are, and keeps keys that differ in bytes")
    func serializerBytes() throws {
        let controls = (0..<0x20).map { UInt8($0) }
        let text = String(decoding: controls + Array(#""\/é☕"#.utf8), as: UTF8.self)
        let escaped = controls.map { byte -> String in
            switch byte {
            case 0x0A: #"\n"#
            case 0x0D: #"\r"#
            case 0x09: #"\t"#
            default: String(format: #"\u%04x"#, byte)
            }
        }.joined()
        #expect(Array(JSONValue.string(text).serialized().utf8) == Array(("\"" + escaped + #"\"\\/é☕""#).utf8))
        #expect(try JSONValue(parsing: JSONValue.string(text).serialized()) == .string(text))
        // Two canonically equal names are two keys, in byte order; a repeated key keeps its last value.
        let keys: JSONValue = .object([("jos\u{e9}", .integer(1)), ("jose\u{301}", .integer(2)), ("a", .integer(3)), ("a", .integer(4))])
        #expect(Array(keys.serialized().utf8) == Array(#"{"a":4,"jose\#u{301}":2,"jos\#u{e9}":1}"#.utf8))
    }

    @Test("UserActivity reads and writes the members of a createActivity operation")
    func activityIsTheOperation() throws {
        let operation = try OperationDecoder().decode(Self.createLine)
        guard case .createActivity(var fromOperation) = operation.command else { throw CancellationError() }
        fromOperation.user = operation.user
        // The line without op is the activity's JSON: it decodes to what apply reads…
        let members = try JSONValue(parsing: Self.createLine).removing(["op"])
        let decoded = try ActivityJSON.decode(UserActivity.self, from: members)
        #expect(decoded == fromOperation)
        // …and the activity writes back the line's members, with the defaults spelled out.
        let written = try ActivityJSON.value(decoded)
        let defaults: JSONValue = .object([("eligibleForHandoff", .bool(true)), ("eligibleForPrediction", .bool(false)),
                                           ("eligibleForPublicIndexing", .bool(false))])
        #expect(written.serialized() == members.merging(defaults).serialized())
        try roundTrip(decoded)
        // Strict, as apply is: a typo is an error naming it.
        let typo = #expect(throws: ActivityError.self) {
            try ActivityJSON.decode(UserActivity.self, from: #"{"activity":"a1","activityType":"t.t","device":"d","eligibleForSerach":true}"#)
        }
        #expect(typo?.code == .malformedOperation && typo?.field == "eligibleForSerach")
    }

    @Test("SearchableItem reads and writes an indexSearchableItems item; IndexedItem adds the store's members")
    func itemIsTheOperation() throws {
        let operation = try OperationDecoder().decode(Self.indexLine)
        guard case .indexSearchableItems(let items) = operation.command, let item = items.first else { throw CancellationError() }
        let member = try JSONValue(parsing: Self.indexLine)["items"].flatMap { if case .array(let a) = $0 { a.first } else { nil } }
        let json = try #require(member)
        #expect(try ActivityJSON.decode(SearchableItem.self, from: json) == item)
        #expect(try ActivityJSON.string(item) == json.serialized())
        try roundTrip(item)
        var stored = item
        stored.expirationDate = at(86_400 * 30)
        let indexed = IndexedItem(item: stored, hasDefaultExpiration: true, position: 7, indexedAt: at(1), firstPosition: 3)
        try roundTrip(indexed)
        #expect(try ActivityJSON.value(indexed).keeping(["uniqueIdentifier", "domainIdentifier", "attributeSet", "expirationDate"])
                    == stored.json)
    }

    @Test("a page of search results is written once, from the values' own JSON: the same bytes as members in any order, every attribute, times to the microsecond")
    func searchPageBytes() throws {
        var attributes = ContentAttributeSet()
        attributes.title = "Latte \"hot\""
        attributes.displayName = "Café"
        attributes.contentDescription = "two\nlines"
        attributes.keywords = ["coffee", "☕"]
        attributes.authorNames = ["Ann"]
        attributes.comment = "c"
        attributes.contentType = "public.text"
        attributes.contentCreationDate = Date(timeIntervalSince1970: 1_764_000_000.25)
        attributes.contentModificationDate = Date(timeIntervalSince1970: 0)
        attributes.rating = 4
        attributes.latitude = 48.85
        attributes.longitude = -2.35
        attributes.thumbnailData = Data([0, 1, 2])
        let item = SearchableItem(uniqueIdentifier: "order-1", domainIdentifier: "orders", attributeSet: attributes,
                                  expirationDate: Date(timeIntervalSince1970: 1_766_592_000.000001))
        let indexed = IndexedItem(item: item, hasDefaultExpiration: false, position: 7,
                                  indexedAt: Date(timeIntervalSince1970: 1_764_000_000.123456), firstPosition: 3)
        let page = [SearchResult(hit: SearchHit(kind: "item", identifier: "order-1", score: 1.5), document: .item(indexed)),
                    SearchResult(hit: SearchHit(kind: "item", identifier: "order-1", score: 2), document: .item(indexed))]
        let bytes = try ActivityJSON.bytes(page)
        // Members given in the opposite order are sorted to the same bytes.
        func reversed(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let members): .object(members.reversed().map { ($0.key, reversed($0.value)) })
            case .array(let values): .array(values.map(reversed))
            default: value
            }
        }
        #expect(bytes == reversed(.array(page.map(\.json))).serializedBytes())
        // What the Encoder path wrote for the same values.
        #expect(bytes == (try ActivityJSON.value(page)).serializedBytes())
        let text = String(decoding: bytes, as: UTF8.self)
        let first = #"[{"identifier":"order-1","item":{"attributeSet":{"authorNames":["Ann"],"comment":"c","contentCreationDate":"2025-11-24T16:00:00.25Z","contentDescription":"two\nlines","contentModificationDate":"1970-01-01T00:00:00Z","contentType":"public.text","displayName":"Café","keywords":["coffee","☕"],"latitude":48.85,"longitude":-2.35,"rating":4.0,"thumbnailData":"AAEC","title":"Latte \"hot\""},"domainIdentifier":"orders","expirationDate":"2025-12-24T16:00:00.000001Z","firstPosition":3,"hasDefaultExpiration":false,"indexedAt":"2025-11-24T16:00:00.123456Z","position":7,"uniqueIdentifier":"order-1"},"kind":"item","score":1.5},"#
        #expect(text.hasPrefix(first), "\(text)")
        // It reads back to the same page (written again: the same bytes).
        #expect(try ActivityJSON.bytes(ActivityJSON.decode([SearchResult].self, from: text)) == bytes)
        // An item whose JSON holds a store member already: the store's value wins, once.
        #expect(JSONValue.object([("a", .integer(1)), ("position", .integer(0))]).mergingSorted([("position", .integer(7))]).serialized()
                    == #"{"a":1,"position":7}"#)
        // Members out of order are merged as merging(_:) merges them.
        let unordered: JSONValue = .object([("z", .integer(1)), ("a", .integer(2))])
        #expect(unordered.mergingSorted([("m", .integer(3))]).serialized() == unordered.merging(.object([("m", .integer(3))])).serialized())
        // Years past 9999 keep the old form.
        #expect(ISO8601Time.string(from: Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01T00:00:00Z")
    }

    @Test("the values reads return round-trip, userInfo keeping integers, doubles and tagged values apart")
    func readValuesRoundTrip() throws {
        var activity = makeActivity("a1", user: "alice") {
            $0.title = "Café"
            $0.userInfo = ["n": .integer(42), "x": .double(42), "d": .date(at(5)), "b": .data(Data([0, 1, 2])),
                           "u": .url(URL(string: "https://example.com/x")!), "id": .uuid(UUID()), "nested": .dictionary(["$x": .bool(true)]),
                           "list": .array([.null, .string("s")])]
            $0.keywords = ["b", "a"]
            $0.requiredUserInfoKeys = ["n"]
            $0.webpageURL = URL(string: "https://example.com/orders/42")
            $0.expirationDate = at(3600)
            var attributes = ContentAttributeSet()
            attributes.rating = 4
            attributes.contentCreationDate = at(2)
            $0.contentAttributeSet = attributes
        }
        activity = activity.normalized
        let text = try ActivityJSON.string(activity)
        #expect(text.contains(#""n":42"#) && text.contains(#""x":42.0"#), "\(text)")
        try roundTrip(CurrentActivity(device: "phone", activity: activity, becameCurrentAt: at(4), position: 9), foundationExact: false)
        try roundTrip(SavedActivity(key: "order-42", activity: activity, savedAt: at(4), position: 10), foundationExact: false)
        try roundTrip(Suggestion(key: "order-42", activity: activity, score: 1.5), foundationExact: false)
        try roundTrip(ActivityRecord(activity: activity, state: .current, createdPosition: 2, createdAt: at(1), lastPosition: 9,
                                     becameCurrentAt: at(4)), foundationExact: false)
        let removal = SavedActivityRemoval(identifier: "orders/42", key: "order-42", position: 12, operation: "savedActivities.deleted",
                                           removedAt: at(9))
        try roundTrip(SavedActivityResolution.removed(removal))
        try roundTrip(SavedActivityResolution.saved(SavedActivity(key: "k", activity: activity, savedAt: at(4), position: 10)), foundationExact: false)
        try roundTrip(SavedActivityResolution.unknown)
        try roundTrip(IndexClientState(index: "orders", clientState: Data("42".utf8)))
        try roundTrip(SearchHit(kind: "item", identifier: "order-1", score: 1.25))
        var update = ActivityUpdate()
        update.title = "Oat latte"
        update.targetContentIdentifier = .some(nil)
        update.keywords = ["oat"]
        try roundTrip(update)
        #expect(try ActivityJSON.string(update) == #"{"keywords":["oat"],"targetContentIdentifier":null,"title":"Oat latte"}"#)
    }

    @Test("CommandResult and the errors a service returns round-trip; the errors carry their stable code")
    func resultsAndErrors() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        defer { store.close() }
        try store.declareActivityTypes([viewOrder])
        let alice = store.user("alice")
        try alice.createActivity(makeActivity("a0") { $0.eligibleForSearch = true })
        try alice.createActivity(makeActivity("a1") { $0.eligibleForSearch = true })
        try alice.becomeCurrent("a0")
        let result = try alice.becomeCurrent("a1")
        #expect(result.superseded == "a0" && result.savedKey == "a1")
        try roundTrip(result)
        let json = try ActivityJSON.value(result)
        #expect(json["positions"] == .object([("first", .integer(Int64(result.positions!.lowerBound))),
                                              ("last", .integer(Int64(result.positions!.upperBound)))]))
        do {
            try alice.becomeCurrent("missing")
            Issue.record("expected unknownActivity")
        } catch ActivityError.noSuchActivity {
            let error = try #require(try? { () throws -> ActivityError in
                do { try alice.becomeCurrent("missing") } catch let error as ActivityError { return error }
                throw CancellationError()
            }())
            try roundTrip(error)
            let body = try ActivityJSON.value(error)
            #expect(body["code"] == .string("unknownActivity") && body["message"] == .string(error.description))
        }
        let pattern: (any Error) -> Bool = { ActivityError.unknownActivity ~= $0 }
        #expect(!pattern(EventLogError(.storeClosed, operation: "x", "y")))
        #expect(EventLogError.storeClosed ~= EventLogError(.storeClosed, operation: "x", "y"))
    }

    @Test("a change feed's element is the line eventlog log --json prints for the event")
    func changeIsTheLogLine() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        defer { store.close() }
        try await store.declareActivityTypes([viewOrder])
        let alice = store.user("alice")
        try await alice.write { try $0.createActivity(makeActivity("a1") { $0.eligibleForSearch = true; $0.userInfo = ["n": .integer(1)] }) }
        try await alice.write { try $0.becomeCurrent("a1") }
        try await alice.write { try $0.indexSearchableItems([makeItem("i1", title: "Latte")]) }
        try alice.indexBatch(index: "orders", clientState: Data("1".utf8)) { $0.deleteSearchableItems(withIdentifiers: ["i1"]) }
        try await alice.write { try $0.deleteAllSavedUserActivities() }
        let head = try store.head()
        var feed = alice.changes(from: 1).makeAsyncIterator()
        var count = 0
        while let change = try await feed.next() {
            let event = try #require(try store.eventStore.event(at: change.position))
            #expect(try ActivityJSON.string(change) == (try ActivityEventCatalog.logJSON(of: event)).serialized())
            try roundTrip(change)
            count += 1
            if change.position == head { break }
        }
        #expect(count == (try ChangeFeedTests.positionsInLog(of: "alice", in: store).count))
    }
}

extension JSONValue {
    /// Objects' members sorted by name, arrays and scalars as they are, and
    /// integer-valued doubles as integers: how two coders' documents compare.
    var sortedForComparison: JSONValue {
        switch self {
        case .object(let members):
            .object(members.map { ($0.key, $0.value.sortedForComparison) }.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) })
        case .array(let values): .array(values.map(\.sortedForComparison))
        case .double(let d) where d == d.rounded() && abs(d) < 1e15: .integer(Int64(d))
        default: self
        }
    }
}
