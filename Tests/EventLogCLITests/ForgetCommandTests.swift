import Foundation
import Testing

/// `eventlog forget --user U` (SPEC §10): what it prints, what the reads show
/// after it, its errors, and time travel after it.
@Suite("forget on the command line")
struct ForgetCommandTests {
    /// Bytes that only alice's operations carry (titles, keywords, userInfo,
    /// item text, client state), so that their absence can be checked.
    static let marker = "ZQXALICE"
    static let now = ["--now", "2026-11-22T11:00:00Z"]

    /// One user's activities, saved copies, items and client state; every
    /// line has its own `at` (minute `minute`, seconds 0 to 9).
    static func lines(user: String, marker: String, minute: Int) -> [String] {
        let at = { (second: Int) in String(format: "2026-11-22T10:%02d:%02dZ", minute, second) }
        let state = Data("\(marker)state".utf8).base64EncodedString()
        return [
            #"{"op":"createActivity","user":"\#(user)","activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","title":"Latte \#(marker)title","keywords":["coffee","\#(marker)keyword"],"userInfo":{"note":"\#(marker)info"},"eligibleForSearch":true,"eligibleForPrediction":true,"persistentIdentifier":"order-42","at":"\#(at(0))"}"#,
            #"{"op":"becomeCurrent","user":"\#(user)","activity":"a1","at":"\#(at(1))"}"#,
            #"{"op":"createActivity","user":"\#(user)","activity":"a2","activityType":"com.example.app.viewOrder","device":"laptop","title":"Mocha \#(marker)","eligibleForSearch":true,"eligibleForPrediction":true,"eligibleForHandoff":true,"at":"\#(at(2))"}"#,
            #"{"op":"becomeCurrent","user":"\#(user)","activity":"a2","at":"\#(at(3))"}"#,
            #"{"op":"indexSearchableItems","user":"\#(user)","items":[{"uniqueIdentifier":"order-1","domainIdentifier":"orders","attributeSet":{"title":"Coffee beans \#(marker)item","keywords":["coffee"]}}],"at":"\#(at(4))"}"#,
            #"{"op":"beginIndexBatch","user":"\#(user)","index":"idx","at":"\#(at(5))"}"#,
            #"{"op":"indexSearchableItems","user":"\#(user)","items":[{"uniqueIdentifier":"order-2","attributeSet":{"title":"Latte order \#(marker)"}}],"at":"\#(at(5))"}"#,
            #"{"op":"endIndexBatch","user":"\#(user)","index":"idx","clientState":"\#(state)","at":"\#(at(5))"}"#,
        ]
    }

    static let declare = #"{"op":"declareActivityTypes","types":["com.example.app.viewOrder"],"at":"2026-11-22T09:59:00Z"}"#

    /// alice and bob interleaved: alice at minutes 1 and 3, bob at 2 and 4
    /// (the second round updates the first's activities and items).
    static func mixed() -> [String] {
        var lines = [declare]
        lines += Self.lines(user: "alice", marker: marker, minute: 1)
        lines += Self.lines(user: "bob", marker: "bobtext", minute: 2)
        lines += Self.lines(user: "alice", marker: marker, minute: 3).dropFirst(4)
        lines += Self.lines(user: "bob", marker: "bobtext", minute: 4).dropFirst(4)
        return lines
    }

    /// Every read of `user`, by command, as printed (JSON).
    static func reads(_ store: String, _ user: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for command in [["items"], ["saved"], ["current"], ["client-state"], ["client-state", "--index", "idx"],
                        ["search", "coffee"] + now, ["search", "latte"] + now, ["query", #"title == "*""#] + now,
                        ["suggestions"] + now, ["handoff", "--device", "tablet"] + now, ["resolve", "order-42"]] {
            let run = try CLI.run(command + ["--store", store, "--user", user, "--json"])
            // resolve of an unknown key is an error, the same one for a user never seen.
            #expect(run.status == 0 || command[0] == "resolve", "\(command) --user \(user): \(run.stderr)")
            result[command.joined(separator: " ")] = run.stdout + (run.status == 0 ? "" : "exit \(run.status)")
        }
        return result
    }

    static func logLines(_ store: String, _ extra: [String] = []) throws -> [[String: Any]] {
        let run = try CLI.run(["log", "--store", store, "--json"] + extra)
        #expect(run.status == 0, "\(run.stderr)")
        return try run.stdout.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    /// A store's files (not the lock file), their bytes by name.
    static func files(_ store: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: store) where name != "lock.mdb" {
            var isDirectory: ObjCBool = false
            let path = (store as NSString).appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result[name] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return result
    }

    @Test("forget: prints the redaction's position, the events redacted and the snapshots removed; every read of the user is empty, others' unchanged; verify and replay --verify pass")
    func forget() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl", Self.mixed())]).status == 0)
        let aliceEvents = try Self.logLines(store, ["--user", "alice"]).count
        #expect(aliceEvents >= 10)
        let early = try #require(try Self.logLines(store).first { ($0["event"] as? [String: Any])?["user"] as? String == "bob" }?["position"] as? Int)
        let bobBefore = try Self.reads(store, "bob")
        let defaultBefore = try Self.reads(store, "")
        #expect(bobBefore["items"]?.contains("order-1") == true && bobBefore["suggestions --now 2026-11-22T11:00:00Z"]?.contains("order-42") == true)
        let aliceBefore = try Self.reads(store, "alice")
        #expect(aliceBefore["items"]?.contains(Self.marker) == true, "the test reads alice's data before forgetting it")
        // A snapshot at the head holds alice's data; one before any of alice's events does not exist here.
        let snapshot = try #require(try CLI.run(["snapshot", "create", "--store", store, "--json"]).object()["position"] as? Int)
        let head = try #require(try CLI.run(["stats", "--store", store, "--json"]).object()["head"] as? Int)

        let run = try CLI.run(["forget", "--store", store, "--user", "alice", "--json", "--at", "2026-11-22T10:30:00Z"])
        #expect(run.status == 0, "\(run.stderr)")
        let result = try run.object()
        #expect(result["user"] as? String == "alice")
        #expect(result["position"] as? Int == head + 1)
        #expect(result["redactedEvents"] as? Int == aliceEvents)
        #expect(result["removedSnapshots"] as? [Int] == [snapshot])
        #expect(result["head"] as? Int == head + 1)
        #expect(Set(result.keys) == ["user", "position", "redactedEvents", "removedSnapshots", "head"])

        // Every read of alice is what a user never seen reads.
        #expect(try Self.reads(store, "alice") == Self.reads(store, "nobody-ever"))
        #expect(try Self.reads(store, "bob") == bobBefore)
        #expect(try Self.reads(store, "") == defaultBefore)
        #expect(try CLI.run(["users", "--store", store, "--json"]).objects().map { $0["user"] as? String } == ["bob"])
        #expect(try CLI.run(["snapshot", "list", "--store", store, "--json"]).objects().isEmpty)
        // The log: alice's events stay as redacted records, the redaction record names her; no marker anywhere.
        let log = try CLI.run(["log", "--store", store, "--json"])
        #expect(!log.stdout.contains(Self.marker))
        let records = try Self.logLines(store)
        #expect(records.count == head + 1)
        #expect(records.filter { $0["redacted"] as? Bool == true }.count == aliceEvents)
        #expect(records.last?["type"] as? String == "eventlog.redaction")
        #expect(try Self.logLines(store, ["--user", "alice"]).isEmpty)
        #expect(try Self.logLines(store, ["--user", "bob"]).first?["position"] as? Int == early)
        let verify = try CLI.run(["verify", "--store", store])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        for replay in [["replay", "--verify"], ["replay", "--verify", "--full"]] {
            let run = try CLI.run(replay + ["--store", store])
            #expect(run.status == 0, "\(replay): \(run.stdout) \(run.stderr)")
        }

        // The text form; a second forget finds nothing; alice may come back, and be forgotten again.
        let again = try CLI.run(["forget", "--store", store, "--user", "alice"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("nothing to forget, 0 events redacted"), "\(again.stdout)")
        #expect(try CLI.run(["stats", "--store", store, "--json"]).object()["head"] as? Int == head + 1, "nothing written")
        let back = Self.lines(user: "alice", marker: "back", minute: 40).prefix(2)
        #expect(try CLI.run(["apply", "--store", store, try dir.file("back.jsonl", Array(back))]).status == 0)
        let text = try CLI.run(["forget", "--store", store, "--user", "alice"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.hasPrefix("forgot alice: 3 events redacted by the redaction record at position \(head + 5); no snapshot removed; head at \(head + 5)"),
                "\(text.stdout)")
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
        #expect(try CLI.run(["replay", "--verify", "--full", "--store", store]).status == 0)
    }

    @Test("forget: a missing or empty user, an invalid name, a missing store, a store it may not write: a clear error, nothing written; a user never seen: 0 events, nothing written")
    func errors() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl", Self.mixed())]).status == 0)
        let files = try Self.files(store)

        let missing = try CLI.run(["forget", "--store", store])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("--user"), "\(missing.stderr)")
        let empty = try CLI.run(["forget", "--store", store, "--user", ""])
        #expect(empty.status == 1)
        #expect(empty.stderr.hasPrefix("eventlog forget: forget: --user is \"\", the default space"), "\(empty.stderr)")
        let long = try CLI.run(["forget", "--store", store, "--user", String(repeating: "u", count: 257)])
        #expect(long.status == 1)
        #expect(long.stderr.contains("forgetUser") && long.stderr.contains("user") && long.stderr.contains("256") && long.stderr.contains("257"),
                "\(long.stderr)")
        let badTime = try CLI.run(["forget", "--store", store, "--user", "alice", "--at", "yesterday"])
        #expect(badTime.status == 1)
        #expect(badTime.stderr.contains("--at"), "\(badTime.stderr)")
        #expect(try Self.files(store) == files, "a rejected forget wrote nothing")

        let unknown = try CLI.run(["forget", "--store", store, "--user", "carol", "--json"])
        #expect(unknown.status == 0, "\(unknown.stderr)")
        let head = try #require(try CLI.run(["stats", "--store", store, "--json"]).object()["head"] as? Int)
        #expect(jsonEqual(try unknown.json(), ["user": "carol", "redactedEvents": 0, "removedSnapshots": [Int](), "head": head]))
        #expect(try Self.files(store)["data.mdb"] == files["data.mdb"], "forgetting a user never seen wrote nothing")

        let absent = try CLI.run(["forget", "--store", dir.sub("absent"), "--user", "alice"])
        #expect(absent.status == 1)
        #expect(absent.stderr.contains(dir.sub("absent")), "\(absent.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("absent") + "/data.mdb"))

        // A store on a read-only mount: LMDB refuses to open it for writing.
        if getuid() == 0 {
            let readOnly = try CLI.run(["forget", "--store", store, "--user", "alice"], through: [
                "/usr/bin/unshare", "-m", "sh", "-c", #"mount --bind -o ro "$0" "$0" && exec "$@""#, store])
            #expect(readOnly.status == 1)
            #expect(readOnly.stderr.hasPrefix("eventlog forget: "), "\(readOnly.stderr)")
            #expect(readOnly.stderr.contains("Read-only file system"), "\(readOnly.stderr)")
            #expect(try Self.files(store)["data.mdb"] == files["data.mdb"])
            #expect(try Self.reads(store, "alice")["items"]?.contains(Self.marker) == true)
        }
    }

    @Test("replay --to P after a forget never brings the user back, for P before the forget too; other users' views are as they were at P")
    func timeTravelAfterForget() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl", Self.mixed())]).status == 0)
        let head = try #require(try CLI.run(["stats", "--store", store, "--json"]).object()["head"] as? Int)
        let aliceEvents = try Self.logLines(store, ["--user", "alice"]).compactMap { $0["position"] as? Int }
        let aliceFirst = try #require(aliceEvents.first)
        // Positions before alice's first event, in the middle of her events, just before the forget; and the forget itself.
        let points = [aliceFirst - 1, aliceFirst + 3, head / 2 + 2, head, head + 1]
        // Before the forget: the same time travel, for bob's reads at P.
        var bobThen: [Int: [String: String]] = [:]
        for p in points where p <= head {
            let into = dir.sub("before-\(p)")
            #expect(try CLI.run(["replay", "--store", store, "--to", String(p), "--into", into]).status == 0)
            bobThen[p] = try Self.reads(into, "bob")
        }
        #expect(try CLI.run(["forget", "--store", store, "--user", "alice"]).status == 0)
        for p in points {
            let into = dir.sub("after-\(p)")
            let travel = try CLI.run(["replay", "--store", store, "--to", String(p), "--into", into, "--json"])
            #expect(travel.status == 0, "P = \(p): \(travel.stderr)")
            #expect(try Self.reads(into, "alice") == Self.reads(into, "nobody-ever"), "P = \(p): alice is back")
            #expect(try !CLI.run(["users", "--store", into, "--json"]).objects().contains { $0["user"] as? String == "alice" })
            if let expected = bobThen[p] { #expect(try Self.reads(into, "bob") == expected, "P = \(p)") }
            let log = try CLI.run(["log", "--store", into, "--json"])
            #expect(log.status == 0 && !log.stdout.contains(Self.marker), "P = \(p)")
            #expect(try Self.logLines(into).count == p)
            // The copied log is the live one's first P records: alice's are redacted there too.
            #expect(jsonEqual(try Self.logLines(into), Array(try Self.logLines(store).prefix(p))), "P = \(p)")
            for file in try FileManager.default.subpathsOfDirectory(atPath: into) {
                let path = (into as NSString).appendingPathComponent(file)
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                #expect(data.range(of: Data(Self.marker.utf8)) == nil, "P = \(p): \(file) holds alice's bytes")
            }
            // verify: the chain through P holds; alice's records up to P are redacted by a record after the copy's end, held as a pending authorization.
            let verify = try CLI.run(["verify", "--store", into, "--json"])
            #expect(verify.status == 0, "P = \(p): \(verify.stdout) \(verify.stderr)")
            let redactedHere = aliceEvents.filter { $0 <= p }.count
            let pending = try verify.object()["pendingRedactions"] as? [[String: Any]] ?? []
            let covered = pending.compactMap { $0["covers"] as? Int }.reduce(0, +)
            #expect(covered == (p > head ? 0 : redactedHere), "P = \(p): \(verify.stdout)")
            let replay = try CLI.run(["replay", "--verify", "--full", "--store", into])
            #expect(replay.status == 0, "P = \(p): \(replay.stdout) \(replay.stderr)")
        }
    }
}
