import Foundation
import Testing

/// Every read command on a store that got `Sample.good`, its JSON parsed.
@Suite("read commands print the shapes of SPEC §7")
struct ReadCommandTests {
    @Test("current: by device, title omitted when absent; --device filters")
    func current() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let all = try CLI.run(["current", "--store", dir.sub("store"), "--json"]).objects()
        #expect(all.map { $0["device"] as? String } == ["laptop", "phone", "tablet"])
        #expect(all[0]["activity"] as? String == "a2")
        #expect(all[0]["activityType"] as? String == Sample.type)
        #expect(all[1]["title"] as? String == "Oat latte")
        #expect(Set(all[0].keys) == ["device", "activity", "activityType", "title"])
        let one = try CLI.run(["current", "--store", dir.sub("store"), "--json", "--device", "tablet"]).objects()
        #expect(one.count == 1 && one[0]["activity"] as? String == "a3")
        #expect(try CLI.run(["current", "--store", dir.sub("store"), "--json", "--device", "watch"]).objects().isEmpty)
    }

    @Test("saved: by key, keywords sorted, userInfo tagged, absent fields omitted")
    func saved() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let saved = try CLI.run(["saved", "--store", dir.sub("store"), "--json"]).objects()
        #expect(saved.map { $0["key"] as? String } == ["a3", "order-42"])
        let order = saved[1]
        #expect(order["persistentIdentifier"] as? String == "order-42")
        #expect(order["keywords"] as? [String] == ["coffee", "oat"])
        let userInfo = try #require(order["userInfo"] as? [String: Any])
        #expect(userInfo["orderID"] as? Int == 42)
        #expect(userInfo["size"] as? String == "medium")
        #expect((userInfo["placed"] as? [String: String]) == ["$date": "2026-11-22T10:00:00Z"])
        #expect(saved[0]["persistentIdentifier"] == nil)
        #expect(saved[0]["expirationDate"] == nil)
        #expect(saved[0]["title"] as? String == "抹茶ラテ")
    }

    @Test("handoff: other devices of the user only")
    func handoff() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let offers = try CLI.run(["handoff", "--store", dir.sub("store"), "--json", "--device", "tablet", "--now", Sample.now]).objects()
        #expect(offers.map { $0["activity"] as? String } == ["a2", "a1"], "most recently made current first")
        let fromPhone = try CLI.run(["handoff", "--store", dir.sub("store"), "--json", "--device", "phone", "--now", Sample.now]).objects()
        #expect(fromPhone.map { $0["device"] as? String } == ["tablet", "laptop"])
    }

    @Test("resolve: saved, removed with its position, unknown")
    func resolve() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let saved = try CLI.run(["resolve", "--store", dir.sub("store"), "--json", "orders/42"]).object()
        #expect(saved["status"] as? String == "saved")
        #expect((saved["saved"] as? [String: Any])?["key"] as? String == "order-42")
        let removed = try CLI.run(["resolve", "--store", dir.sub("store"), "--json", "order-7"]).object()
        #expect(removed["status"] as? String == "removed")
        let removal = try #require(removed["removal"] as? [String: Any])
        #expect(removal["operation"] as? String == "savedActivities.deleted")
        #expect(removal["removedAt"] as? String == "2026-11-22T10:00:09Z")
        let position = try #require(removal["position"] as? Int)
        let event = try CLI.run(["log", "--store", dir.sub("store"), "--json", "--from", String(position), "--limit", "1"]).object()
        #expect(event["type"] as? String == "savedActivities.deleted")
        let unknown = try CLI.run(["resolve", "--store", dir.sub("store"), "--json", "nothing"]).object()
        #expect(unknown["status"] as? String == "unknown")
    }

    @Test("items: by identifier, --domain takes the domain and those below it")
    func items() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let items = try CLI.run(["items", "--store", dir.sub("store"), "--json"]).objects()
        #expect(items.map { $0["uniqueIdentifier"] as? String } == ["menu-latte", "order-1", "order-2"])
        let latte = items[0]
        let attributes = try #require(latte["attributeSet"] as? [String: Any])
        #expect(attributes["rating"] as? Double == 5, "the update replaced the rating")
        #expect(attributes["keywords"] as? [String] == ["coffee"], "and kept the keywords")
        #expect(latte["domainIdentifier"] as? String == "menu.drinks")
        #expect((latte["expirationDate"] as? String)?.hasSuffix("Z") == true)
        let orders = try CLI.run(["items", "--store", dir.sub("store"), "--json", "--domain", "orders"]).objects()
        #expect(orders.map { $0["uniqueIdentifier"] as? String } == ["order-1", "order-2"])
    }

    @Test("search: by score then identifier; query: by identifier; malformed query names its column")
    func searchAndQuery() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let hits = try CLI.run(["search", "--store", dir.sub("store"), "--json", "--now", Sample.now, "lat"]).objects()
        #expect(Set(hits.compactMap { $0["identifier"] as? String }) == ["menu-latte", "order-42"])
        let scores = hits.compactMap { $0["score"] as? Double }
        #expect(scores == scores.sorted(by: >))
        #expect(Set(hits.compactMap { $0["kind"] as? String }) == ["item", "activity"])
        let limited = try CLI.run(["search", "--store", dir.sub("store"), "--json", "--now", Sample.now, "--limit", "1", "lat"]).objects()
        #expect(limited.count == 1)

        let matches = try CLI.run(["query", "--store", dir.sub("store"), "--json", "--now", Sample.now,
                                   #"keywords == "coffee"c && kind == "item""#]).objects()
        #expect(matches.map { $0["identifier"] as? String } == ["menu-latte", "order-2"])

        let bad = try CLI.run(["query", "--store", dir.sub("store"), "--json", #"title == "unterminated"#])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("column"))
        #expect(bad.stdout.isEmpty)
    }

    @Test("client-state: base64, or null for an index without one")
    func clientState() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let state = try CLI.run(["client-state", "--store", dir.sub("store"), "--json", "--index", "orders-indexer"]).object()
        #expect(state["index"] as? String == "orders-indexer")
        #expect(state["clientState"] as? String == "NDI=")
        let none = try CLI.run(["client-state", "--store", dir.sub("store"), "--json", "--index", "other"]).object()
        #expect(none["clientState"] is NSNull)
        let all = try CLI.run(["client-state", "--store", dir.sub("store"), "--json"]).objects()
        #expect(all.map { $0["index"] as? String } == ["orders-indexer"])
    }

    @Test("log --json: one decodable event a line, positions in order, --from and --limit")
    func log() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let run = try CLI.run(["log", "--store", dir.sub("store"), "--json"])
        #expect(run.status == 0)
        let events = try run.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(events.compactMap { $0["position"] as? Int } == Array(1...events.count))
        for event in events {
            // activityTypes.declared is store-wide and stays at version 1; the rest carry their space (2).
            #expect(event["type"] is String && event["version"] as? Int == (event["type"] as? String == "activityTypes.declared" ? 1 : 2))
            #expect((event["at"] as? String)?.hasSuffix("Z") == true)
            #expect(event["event"] is [String: Any], "every event of this build decodes: \(event)")
        }
        let created = try #require(events.first { $0["type"] as? String == "activity.created" })
        #expect(((created["event"] as? [String: Any])?["activity"] as? [String: Any])?["activity"] as? String == "a1")
        let page = try CLI.run(["log", "--store", dir.sub("store"), "--json", "--from", "3", "--limit", "2"])
        #expect(page.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["position"] as? Int
        } == [3, 4])
    }

    @Test("stats: head, counts by type, named databases, map and readers")
    func stats() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let stats = try CLI.run(["stats", "--store", dir.sub("store"), "--json"]).object()
        let head = try #require(stats["head"] as? Int)
        let counts = try #require(stats["eventCounts"] as? [String: Int])
        #expect(counts.values.reduce(0, +) == head)
        #expect(counts["activity.created"] == 3)
        let databases = try #require(stats["databases"] as? [[String: Any]])
        let names = databases.compactMap { $0["name"] as? String }
        #expect(names.contains("log") && names.contains("activity.saved"))
        #expect(names == names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect((databases.first { $0["name"] as? String == "log" }?["entries"] as? Int) == head)
        #expect((stats["mapSize"] as? Int ?? 0) >= (stats["mapUsed"] as? Int ?? .max))
        let readers = try #require(stats["readers"] as? [String: Int])
        #expect((readers["max"] ?? 0) > 0)
    }

    @Test("EVENTLOG_STORE is the default store")
    func environmentDefault() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let run = try CLI.run(["current", "--json"], environment: ["EVENTLOG_STORE": dir.sub("store")])
        #expect(try run.objects().count == 3)
    }
}
