import Foundation
import Testing

/// Identifiers at exactly the limit (256 UTF-8 bytes, SPEC §2 and §4) go
/// through every write and come back whole from every read, in JSON and in
/// tables; one byte more is refused with the field named.
@Suite("identifiers of exactly 256 UTF-8 bytes")
struct IdentifierLimitTests {
    /// `prefix` filled up to exactly `bytes` UTF-8 bytes with `filler` (several bytes each).
    static func identifier(_ prefix: String, _ filler: Character, bytes: Int = 256) -> String {
        var value = prefix
        while value.utf8.count + String(filler).utf8.count <= bytes { value.append(filler) }
        while value.utf8.count < bytes { value.append("x") }
        return value
    }

    static let type = "com.example." + String(repeating: "a", count: 244)
    static let activity = identifier("act-", "日")
    static let device = identifier("dev-", "é")
    static let user = identifier("user-", "ü")
    static let key = identifier("p-", "ß")
    static let target = identifier("t-", "-")
    static let item = identifier("i-", "日")
    static let domain = String(repeating: "d", count: 120) + "." + String(repeating: "e", count: 135)
    static let index = identifier("idx-", "ñ")

    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static var operations: [String] {
        [
            json(["op": "declareActivityTypes", "types": [type], "at": "2026-11-22T10:00:00Z"]),
            json(["op": "createActivity", "activity": activity, "activityType": type, "device": device,
                  "title": "Long names", "eligibleForSearch": true, "persistentIdentifier": key, "targetContentIdentifier": target,
                  "at": "2026-11-22T10:00:01Z"]),
            json(["op": "becomeCurrent", "activity": activity, "at": "2026-11-22T10:00:02Z"]),
            json(["op": "createActivity", "activity": "other", "activityType": type, "device": "phone",
                  "at": "2026-11-22T10:00:03Z"]),
            json(["op": "beginIndexBatch", "index": index, "at": "2026-11-22T10:00:04Z"]),
            json(["op": "indexSearchableItems", "items": [["uniqueIdentifier": item, "domainIdentifier": domain,
                                                            "attributeSet": ["title": "Long item"]]], "at": "2026-11-22T10:00:04Z"]),
            json(["op": "endIndexBatch", "index": index, "clientState": "NDI=", "at": "2026-11-22T10:00:04Z"]),
        ]
    }

    @Test("every identifier at 256 bytes is stored and printed whole by every read command")
    func atTheLimit() throws {
        for value in [Self.type, Self.activity, Self.device, Self.user, Self.key, Self.target, Self.item, Self.domain, Self.index] {
            #expect(value.utf8.count == 256, "\(value)")
        }
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        // Every operation but the store-wide declaration in the 256-byte user's space (apply --user).
        let applied = try CLI.run(["apply", "--store", store, "--user", Self.user, try dir.file("ops.jsonl", Self.operations)])
        #expect(applied.status == 0, "\(applied.stderr)")
        let now = "2026-11-22T11:00:00Z"

        let items = try CLI.run(["items", "--store", store, "--user", Self.user, "--domain", Self.domain, "--json"]).objects()
        #expect(items.map { $0["uniqueIdentifier"] as? String } == [Self.item])
        #expect(items.first?["domainIdentifier"] as? String == Self.domain)
        #expect(try CLI.run(["items", "--store", store, "--user", Self.user]).stdout.contains(Self.item))

        let current = try CLI.run(["current", "--store", store, "--user", Self.user, "--device", Self.device, "--json"]).objects()
        #expect(current.first?["activity"] as? String == Self.activity && current.first?["activityType"] as? String == Self.type)
        #expect(try CLI.run(["current", "--store", store, "--user", Self.user]).stdout.contains(Self.device))

        let saved = try CLI.run(["saved", "--store", store, "--user", Self.user, "--json"]).objects()
        #expect(saved.map { $0["key"] as? String } == [Self.key])
        #expect(saved.first?["activity"] as? String == Self.activity)

        let resolved = try CLI.run(["resolve", Self.target, "--store", store, "--user", Self.user, "--json"])
        #expect(resolved.status == 0 && resolved.stdout.contains(Self.json(["k": Self.key]).dropFirst(5).dropLast()), "\(resolved.stdout)")

        let hits = try CLI.run(["query", "uniqueIdentifier == \"\(Self.item)\"", "--store", store, "--user", Self.user, "--now", now, "--json"]).objects()
        #expect(hits.map { $0["identifier"] as? String } == [Self.item])
        let search = try CLI.run(["search", "long", "--store", store, "--user", Self.user, "--now", now, "--json"]).objects()
        #expect(Set(search.compactMap { $0["identifier"] as? String }) == [Self.item, Self.key])

        let state = try CLI.run(["client-state", "--store", store, "--user", Self.user, "--index", Self.index, "--json"]).object()
        #expect(state["index"] as? String == Self.index && state["clientState"] as? String == "NDI=")

        let offers = try CLI.run(["handoff", "--store", store, "--user", Self.user, "--device", "phone", "--now", now, "--json"]).objects()
        #expect(offers.map { $0["device"] as? String } == [Self.device])

        let log = try CLI.run(["log", "--store", store, "--user", Self.user, "--json"])
        #expect(try CLI.run(["users", "--store", store, "--json"]).objects().map { $0["user"] as? String } == [Self.user])
        for value in [Self.activity, Self.item, Self.index] {
            #expect(log.stdout.contains(Self.json(["k": value]).dropFirst(5).dropLast()), "log lacks \(value.prefix(10))…")
        }
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
    }

    @Test("one byte more is refused with the field named, and nothing is written")
    func pastTheLimit() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl", Array(Self.operations.prefix(1)))]).status == 0)
        let long = Self.identifier("act-", "日", bytes: 257)
        let cases: [(field: String, line: String)] = [
            ("activity", Self.json(["op": "createActivity", "activity": long, "activityType": Self.type, "device": "phone"])),
            ("device", Self.json(["op": "createActivity", "activity": "a", "activityType": Self.type, "device": long])),
            ("persistentIdentifier", Self.json(["op": "createActivity", "activity": "a", "activityType": Self.type, "device": "phone",
                                                "persistentIdentifier": long])),
            ("uniqueIdentifier", Self.json(["op": "indexSearchableItems", "items": [["uniqueIdentifier": long, "attributeSet": [String: String]()]]])),
            ("index", Self.json(["op": "beginIndexBatch", "index": long]) + "\n" + Self.json(["op": "endIndexBatch", "index": long, "clientState": "NDI="])),
        ]
        for (field, line) in cases {
            let run = try CLI.run(["apply", "--store", store, "-"], input: line)
            #expect(run.status != 0, "\(field)")
            #expect(run.stderr.contains(field) && run.stderr.contains("256"), "\(field): \(run.stderr)")
        }
        #expect(try CLI.run(["log", "--store", store, "--json"]).stdout.split(separator: "\n").count == 1, "a refused line wrote")
    }
}
