import ActivityDomain
import ActivityServiceCore
import EventLog
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The JSON endpoints, through HummingbirdTesting's router client: each
/// answers the library's JSON (the same bytes ActivityJSON writes for what
/// the library returns), and each rejection its status and stable code.
@Suite("Endpoints")
struct EndpointTests {
    static let viewOrder = "com.example.app.viewOrder"

    @Test("activities: create, update, becomeCurrent, resign, invalidate, current, handoff, saved, suggestions, resolve")
    func activities() async throws {
        try await withService { client, store in
            let alice = store.user("alice")
            let create = try await client.call(.post, "/v1/activities", as: "alice", json: #"""
                {"activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","title":"Latte","userInfo":{"orderID":42},"eligibleForSearch":true,"eligibleForPrediction":true,"persistentIdentifier":"order-42","targetContentIdentifier":"orders/42","keywords":["coffee"]}
                """#)
            #expect(create.status == .created, "\(create.text)")
            #expect(create.json["operation"] == .string("createActivity"))
            #expect(try await client.call(.post, "/v1/activities/a1/becomeCurrent", as: "alice").status == .ok)
            let current = try await client.call(.get, "/v1/current", as: "alice")
            let currentActivities = try await alice.read { try $0.currentActivities() }
            #expect(current.text == (try ActivityJSON.string(currentActivities)))
            #expect(current.json.arrayCount == 1)
            let phone = try await client.call(.get, "/v1/current?device=phone", as: "alice")
            #expect(phone.text == current.text)
            // Another device of alice's is offered Handoff; the phone itself is not.
            let offers = try await client.call(.get, "/v1/handoff?device=laptop", as: "alice")
            #expect(offers.text == current.text)
            #expect(try await client.call(.get, "/v1/handoff?device=phone", as: "alice").text == "[]")
            let updated = try await client.call(.patch, "/v1/activities/a1", as: "alice", json: #"{"title":"Oat latte","targetContentIdentifier":null}"#)
            #expect(updated.status == .ok && updated.json["savedKey"] == .string("order-42"), "\(updated.text)")
            #expect(try await client.call(.post, "/v1/activities/a1/userInfo", as: "alice", json: #"{"size":"medium"}"#).status == .ok)
            let record = try await client.call(.get, "/v1/activities/a1", as: "alice")
            let a1 = try #require(try await alice.read { try $0.activity("a1") })
            #expect(record.text == (try ActivityJSON.string(a1)))
            #expect(record.json["title"] == .string("Oat latte") && record.json["userInfo"]?["size"] == .string("medium"))
            let saved = try await client.call(.get, "/v1/saved", as: "alice")
            let savedActivities = try await alice.read { try $0.savedActivities() }
            #expect(saved.text == (try ActivityJSON.string(savedActivities)))
            let suggestions = try await client.call(.get, "/v1/suggestions?limit=5", as: "alice")
            #expect(suggestions.json.arrayCount == 1, "\(suggestions.text)")
            let resolved = try await client.call(.get, "/v1/resolve?identifier=order-42", as: "alice")
            #expect(resolved.json["status"] == .string("saved"))
            #expect(try await client.call(.post, "/v1/activities/a1/resignCurrent", as: "alice").status == .ok)
            #expect(try await client.call(.get, "/v1/current", as: "alice").text == "[]")
            #expect(try await client.call(.post, "/v1/activities/a1/invalidate", as: "alice").status == .ok)
            #expect(try await client.call(.post, "/v1/saved/delete", as: "alice", json: #"{"persistentIdentifiers":["order-42"]}"#).status == .ok)
            let removed = try await client.call(.get, "/v1/resolve?identifier=order-42", as: "alice")
            #expect(removed.json["status"] == .string("removed"))
            #expect(try await client.call(.delete, "/v1/saved", as: "alice").status == .ok)
            #expect(try await client.call(.get, "/v1/activities", as: "alice").json.arrayCount == 1)

            // Rejections: their status and code, and nothing written.
            let head = try store.head()
            let unknown = try await client.call(.post, "/v1/activities/missing/becomeCurrent", as: "alice")
            #expect(unknown.status == .notFound && unknown.errorCode == "unknownActivity", "\(unknown.text)")
            #expect(try await client.call(.get, "/v1/activities/missing", as: "alice").status == .notFound)
            let invalidated = try await client.call(.post, "/v1/activities/a1/becomeCurrent", as: "alice")
            #expect(invalidated.status == .conflict && invalidated.errorCode == "activityInvalidated")
            let again = try await client.call(.post, "/v1/activities", as: "alice",
                                              json: #"{"activity":"a1","activityType":"com.example.app.viewOrder","device":"phone"}"#)
            #expect(again.status == .conflict && again.errorCode == "activityAlreadyExists")
            let typo = try await client.call(.patch, "/v1/activities/a1", as: "alice", json: #"{"titel":"x"}"#)
            #expect(typo.status == .badRequest && typo.errorCode == "malformedOperation" && typo.json["error"]?["field"] == .string("titel"))
            let undeclared = try await client.call(.post, "/v1/activities", as: "alice", json: #"{"activity":"a2","activityType":"com.other.x","device":"phone"}"#)
            #expect(undeclared.status == .badRequest && undeclared.errorCode == "undeclaredActivityType")
            let malformed = try await client.call(.post, "/v1/activities", as: "alice", json: #"{"activity":"#)
            #expect(malformed.status == .badRequest && malformed.errorCode == "malformedJSON")
            let notUTF8 = try await client.execute(uri: "/v1/activities", method: .post, headers: [.authorization: "Bearer \(token("alice"))"],
                                                   body: ByteBuffer(bytes: [0x7B, 0x22, 0xFF, 0x22, 0x7D]))
            #expect(notUTF8.status == .badRequest)
            #expect(try store.head() == head, "a rejected request wrote nothing")
        }
    }

    @Test("items: index (and as a batch with its client state), fetch, delete by id, domain and all; search and query with documents")
    func itemsAndSearch() async throws {
        try await withService { client, store in
            let alice = store.user("alice")
            let indexed = try await client.call(.post, "/v1/items", as: "alice", json: #"""
                {"items":[{"uniqueIdentifier":"order-1","domainIdentifier":"orders.2026","attributeSet":{"title":"Oat latte","keywords":["coffee"]}},{"uniqueIdentifier":"menu-1","domainIdentifier":"menu","attributeSet":{"title":"Latte macchiato"}}]}
                """#)
            #expect(indexed.status == .ok, "\(indexed.text)")
            let last = try #require(indexed.json["positions"]?["last"]).integerValue
            let search = try await client.call(.get, "/v1/search?q=latte&after=\(last)", as: "alice")
            let results = try await alice.read { try $0.searchDocuments("latte", now: Date()) }
            #expect(search.text == (try ActivityJSON.string(results)), "\(search.text)")
            #expect(search.json.arrayCount == 2 && search.json.first?["item"]?["uniqueIdentifier"] != nil)
            let query = try await client.call(.get, "/v1/query?q=title%20%3D%3D%20%22oat*%22c", as: "alice")
            #expect(query.json.arrayCount == 1, "\(query.text)")
            let badQuery = try await client.call(.get, "/v1/query?q=title%20%3D%3D", as: "alice")
            #expect(badQuery.status == .badRequest && badQuery.errorCode == "malformedQuery")
            let items = try await alice.read { try $0.items() }
            #expect(try await client.call(.get, "/v1/items", as: "alice").text == (try ActivityJSON.string(items)))
            #expect(try await client.call(.get, "/v1/items?domain=orders", as: "alice").json.arrayCount == 1)
            #expect(try await client.call(.get, "/v1/items/order-1", as: "alice").json["uniqueIdentifier"] == .string("order-1"))
            let fetched = try await client.call(.post, "/v1/items/fetch", as: "alice", json: #"{"identifiers":["menu-1","nope","order-1"]}"#)
            #expect(fetched.json.arrayCount == 2 && fetched.json.first?["uniqueIdentifier"] == .string("menu-1"))
            // A batch: the items and the client state together; a stale expectation rejects it whole.
            let batch = try await client.call(.post, "/v1/items", as: "alice", json: #"""
                {"items":[{"uniqueIdentifier":"order-2","attributeSet":{"title":"Flat white"}}],"index":"orders-indexer","clientState":"NDI="}
                """#)
            #expect(batch.status == .ok, "\(batch.text)")
            let state = try await client.call(.get, "/v1/clientState/orders-indexer", as: "alice")
            #expect(state.json["clientState"] == .string("NDI="))
            let stale = try await client.call(.post, "/v1/items", as: "alice", json: #"""
                {"items":[{"uniqueIdentifier":"order-3","attributeSet":{"title":"x"}}],"index":"orders-indexer","clientState":"NDM=","expectedClientState":"MQ=="}
                """#)
            #expect(stale.status == .conflict && stale.errorCode == "mismatchedClientState")
            #expect(try alice.item("order-3") == nil)
            #expect(try await client.call(.delete, "/v1/items/order-2", as: "alice").json["removedItems"] == .array([.string("order-2")]))
            #expect(try await client.call(.post, "/v1/items/deleteDomains", as: "alice", json: #"{"domains":["orders"]}"#)
                        .json["removedItems"] == .array([.string("order-1")]))
            #expect(try await client.call(.post, "/v1/items/delete", as: "alice", json: #"{"identifiers":["nope"]}"#).status == .ok)
            #expect(try await client.call(.delete, "/v1/items", as: "alice").json["removedItems"] == .array([.string("menu-1")]))
            #expect(try await alice.read { try $0.items() }.isEmpty)
            #expect(try await client.call(.get, "/v1/items/order-1", as: "alice").status == .notFound)
        }
    }

    @Test("a token for alice cannot read or change bob's data; no token, a forged or an expired one is 401")
    func authentication() async throws {
        try await withService { client, store in
            let bob = store.user("bob")
            try await bob.write { try $0.createActivity(UserActivity(activity: "a1", activityType: Self.viewOrder, device: "phone")) }
            try await bob.write { try $0.becomeCurrent("a1") }
            try await bob.write { try $0.indexSearchableItems([SearchableItem(uniqueIdentifier: "secret", attributeSet: {
                var a = ContentAttributeSet(); a.title = "Bob's latte"; return a
            }())]) }
            // Alice's token names alice: every route acts in her space alone.
            #expect(try await client.call(.get, "/v1/activities/a1", as: "alice").status == .notFound)
            #expect(try await client.call(.get, "/v1/current", as: "alice").text == "[]")
            #expect(try await client.call(.get, "/v1/search?q=latte", as: "alice").text == "[]")
            #expect(try await client.call(.get, "/v1/items/secret", as: "alice").status == .notFound)
            #expect(try await client.call(.delete, "/v1/items", as: "alice").status == .ok)
            #expect(try await client.call(.post, "/v1/activities/a1/invalidate", as: "alice").status == .notFound)
            let secret = try bob.item("secret"), bobsA1 = try await bob.read { try $0.activity("a1") }
            #expect(secret != nil && bobsA1?.state == .current, "bob's data is untouched")
            // A body naming another owner is refused, not obeyed.
            let spoof = try await client.call(.post, "/v1/activities", as: "alice",
                                              json: #"{"activity":"a9","activityType":"com.example.app.viewOrder","device":"phone","user":"bob"}"#)
            #expect(spoof.status == .badRequest && spoof.errorCode == "invalidUser", "\(spoof.text)")
            #expect(try await bob.read { try $0.activity("a9") } == nil)
            // Bob's own token reads bob's.
            #expect(try await client.call(.get, "/v1/activities/a1", as: "bob").status == .ok)

            let none = try await client.call(.get, "/v1/current", as: nil)
            #expect(none.status == .unauthorized && none.errorCode == "unauthorized")
            let forged = token("bob", key: Array("another key, also thirty-two bytes long".utf8))
            #expect(try await client.execute(uri: "/v1/current", method: .get, headers: [.authorization: "Bearer \(forged)"]).status == .unauthorized)
            let expired = token("bob", expires: Date().addingTimeInterval(-1))
            #expect(try await client.execute(uri: "/v1/current", method: .get, headers: [.authorization: "Bearer \(expired)"]).status == .unauthorized)
            #expect(try await client.execute(uri: "/v1/current", method: .get, headers: [.authorization: "Bearer x.y.z"]).status == .unauthorized)
        }
    }

    @Test("/health answers without a token; /metrics shows the store's commits")
    func healthAndMetrics() async throws {
        try await withService { client, store in
            try await store.user("alice").write { try $0.createActivity(UserActivity(activity: "a1", activityType: Self.viewOrder, device: "phone")) }
            let health = try await client.call(.get, "/health", as: nil)
            let head = try store.head()
            #expect(health.status == .ok && health.json["status"] == .string("ok") && health.json["head"] == .integer(Int64(head)))
            let metrics = try await client.call(.get, "/metrics", as: nil)
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains("eventlog_commits_total{store="), "\(metrics.text.prefix(400))")
        }
    }
}

extension JSONValue {
    var arrayCount: Int? {
        guard case .array(let values) = self else { return nil }
        return values.count
    }

    var first: JSONValue? {
        guard case .array(let values) = self else { return nil }
        return values.first
    }

    var integerValue: Int64 {
        if case .integer(let i) = self { return i }
        return -1
    }
}
