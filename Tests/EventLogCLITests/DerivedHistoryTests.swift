import Foundation
import Testing

/// SPEC §2, "The log vouches for everything derived from it", through
/// `eventlog`: the index environment and the snapshots record the position
/// and link of the log they were built from; every open checks them; one of
/// another history, or one ahead of the log, is never read (the error names
/// both positions, or both links, and says how to rebuild it); `verify` and
/// `stats` report each one's history; a log behind anything derived has
/// lost records: writers refuse it and `verify` fails.
@Suite("The log vouches for what is derived from it")
struct DerivedHistoryTests {
    /// `count` items for user u1, one transaction each, their words `word`.
    static func items(_ count: Int, word: String, from first: Int = 0) -> [String] {
        (first..<(first + count)).map { n in
            #"{"op":"indexSearchableItems","user":"u1","items":[{"uniqueIdentifier":"\#(word)-\#(n)","attributeSet":{"title":"\#(word) \#(n)"}}],"at":"2026-11-22T10:00:\#(String(format: "%02d", n % 60))Z"}"#
        }
    }

    static func makeStore(_ dir: TemporaryDirectory, _ name: String, _ lines: [String]) throws -> String {
        let store = dir.sub(name)
        let run = try CLI.run(["apply", "--store", store, "--transaction-size", "1", try dir.file(name + ".jsonl", lines)])
        #expect(run.status == 0, "\(run.stderr)")
        return store
    }

    static func search(_ store: String, _ text: String) -> [String] { ["search", "--store", store, "--user", "u1", text, "--json"] }

    static func indexHistory(_ store: String) throws -> [String: Any]? {
        let stats = try CLI.run(["stats", "--store", store, "--json"])
        return (try stats.object()["index"] as? [String: Any])?["history"] as? [String: Any]
    }

    @Test("another store's index/ at the same position: search, query and stats refuse or report it, verify fails naming both links; replay rebuilds it from this log")
    func indexOfAnotherHistory() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let a = try Self.makeStore(dir, "a", Self.items(8, word: "alpha"))
        let b = try Self.makeStore(dir, "b", Self.items(8, word: "bravo"))
        try FileManager.default.removeItem(atPath: a + "/index")
        try FileManager.default.copyItem(atPath: b + "/index", toPath: a + "/index")
        for command in [Self.search(a, "bravo"), ["query", "--store", a, "--user", "u1", #"title == "bravo*""#, "--json"]] {
            let run = try CLI.runBounded(command)
            #expect(run.exited && run.status == 1 && !run.stdout.contains("bravo"), "\(command[0]): \(run)")
            #expect(run.stderr.contains("another history") && run.stderr.contains("record 8") && run.stderr.contains("eventlog replay"),
                    "\(command[0]): \(run.stderr)")
        }
        let history = try #require(try Self.indexHistory(a))
        #expect(history["history"] as? String == "anotherHistory" && history["position"] as? Int == 8, "\(history)")
        let stats = try CLI.run(["stats", "--store", a])
        #expect(stats.status == 0 && !stats.stdout.contains("current at") && stats.stdout.contains("another history"), "\(stats.stdout)")
        let verify = try CLI.run(["verify", "--store", a])
        #expect(verify.status == 1 && verify.stderr.contains("another history"), "\(verify)")
        let verifyJSON = try CLI.run(["verify", "--store", a, "--json"])
        #expect((try verifyJSON.object()["index"] as? [String: Any])?["history"] as? String == "anotherHistory", "\(verifyJSON.stdout)")
        // The remedy the message gives.
        let replay = try CLI.run(["replay", "--store", a])
        #expect(replay.status == 0, "\(replay.stderr)")
        let found = try CLI.run(Self.search(a, "alpha"))
        #expect(found.status == 0 && found.stdout.contains("alpha-3") && !found.stdout.contains("bravo"), "\(found)")
        #expect(try CLI.run(["verify", "--store", a]).status == 0)
        #expect(try Self.indexHistory(a)?["history"] as? String == "thisLog")
    }

    @Test("data.mdb restored from an older copy beside a newer index: reads never answer from the index, writers refuse the store and write nothing, verify fails naming both positions")
    func logBehindTheIndex() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Self.makeStore(dir, "store", Self.items(5, word: "early"))
        let old = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
        let more = try dir.file("more.jsonl", Self.items(7, word: "late", from: 5))
        #expect(try CLI.run(["apply", "--store", store, "--transaction-size", "1", more]).status == 0)
        #expect(try CLI.run(Self.search(store, "late")).stdout.contains("late-11"))
        try old.write(to: URL(fileURLWithPath: store + "/data.mdb"))
        for command in [Self.search(store, "late"), ["query", "--store", store, "--user", "u1", #"title == "late*""#, "--json"]] {
            let run = try CLI.runBounded(command)
            #expect(run.exited && run.status == 1 && !run.stdout.contains("late-"), "\(command[0]): \(run)")
            #expect(run.stderr.contains("position 12") && run.stderr.contains("head is 5") && run.stderr.contains("lost records"),
                    "\(command[0]): \(run.stderr)")
        }
        let verify = try CLI.run(["verify", "--store", store])
        #expect(verify.status == 1 && verify.stderr.contains("lost records") && verify.stderr.contains("12")
                && verify.stderr.contains("head is 5"), "\(verify)")
        #expect(try Self.indexHistory(store)?["history"] as? String == "aheadOfLog")
        // Writers refuse: nothing is written over positions 6 to 12, which the index has seen.
        let write = try dir.file("write.jsonl", Self.items(1, word: "over", from: 20))
        for command in [["apply", "--store", store, write], ["replay", "--store", store], ["forget", "--store", store, "--user", "u1"],
                        ["snapshot", "create", "--store", store]] {
            let run = try CLI.runBounded(command)
            #expect(run.exited && run.status == 1 && run.stderr.contains("lost records") && run.stderr.contains("position 12"),
                    "\(command[0]): \(run)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == old, "a writer wrote over the positions the index has seen")
    }
}

extension DerivedHistoryTests {
    /// `count` items, one transaction each, each for its own user `prefix-N`.
    static func usersItems(_ count: Int, prefix: String) -> [String] {
        (0..<count).map { n in
            #"{"op":"indexSearchableItems","user":"\#(prefix)-\#(n)","items":[{"uniqueIdentifier":"i","attributeSet":{"title":"\#(prefix)word"}}],"at":"2026-11-22T10:00:00Z"}"#
        }
    }

    static func users(_ store: String) throws -> [String] {
        try CLI.run(["users", "--store", store, "--json"]).objects().compactMap { $0["user"] as? String }
    }

    @Test("another store's snapshots copied into snapshots/: replay, replay --verify and time travel never use them; snapshot list and verify report their history; verify fails until they are deleted")
    func snapshotOfAnotherStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let a = try Self.makeStore(dir, "a", Self.usersItems(10, prefix: "alice"))
        let b = try Self.makeStore(dir, "b", Self.usersItems(8, prefix: "bob"))
        #expect(try CLI.run(["snapshot", "create", "--store", b]).status == 0)
        let copied = try FileManager.default.contentsOfDirectory(atPath: b + "/snapshots")
        #expect(copied.count == 2, "\(copied)")
        try FileManager.default.createDirectory(atPath: a + "/snapshots", withIntermediateDirectories: true)
        for name in copied { try FileManager.default.copyItem(atPath: b + "/snapshots/" + name, toPath: a + "/snapshots/" + name) }
        let aliceUsers = try Self.users(a)
        #expect(aliceUsers.count == 10 && aliceUsers.allSatisfy { $0.hasPrefix("alice") })

        let list = try CLI.run(["snapshot", "list", "--store", a, "--json"])
        let listed = try list.objects()
        #expect(listed.count == 2 && Set(listed.compactMap { $0["kind"] as? String }) == ["views", "index"], "\(list.stdout)")
        #expect(listed.allSatisfy { ($0["history"] as? [String: Any])?["history"] as? String == "anotherHistory" }, "\(list.stdout)")

        let verifyViews = try CLI.run(["replay", "--verify", "--store", a, "--json"])
        #expect(verifyViews.status == 0, "\(verifyViews)")
        #expect(try verifyViews.object()["snapshot"] as? Int == nil, "\(verifyViews)")
        let travel = try CLI.run(["replay", "--to", "9", "--into", dir.sub("then"), "--store", a, "--json"])
        #expect(travel.status == 0, "\(travel)")
        #expect(try travel.object()["snapshot"] as? Int == nil, "\(travel)")
        #expect(try Self.users(dir.sub("then")).allSatisfy { $0.hasPrefix("alice") })
        let replay = try CLI.run(["replay", "--store", a, "--json"])
        #expect(replay.status == 0, "\(replay)")
        #expect(try replay.object()["snapshot"] as? Int == nil, "\(replay)")
        #expect(try Self.users(a) == aliceUsers)
        let search = try CLI.run(["search", "--store", a, "--user", "bob-1", "bobword", "--json"])
        #expect(search.status == 0 && search.stdout == "[]\n", "\(search)")

        let verify = try CLI.run(["verify", "--store", a])
        #expect(verify.status == 1 && verify.stderr.contains("not this log's") && verify.stderr.contains("another history")
                && verify.stderr.contains("snapshot at 8"), "\(verify)")
        #expect(try CLI.run(["snapshot", "delete", "8", "--store", a]).status == 0)
        #expect(try CLI.run(["snapshot", "delete", "8", "--index", "--store", a]).status == 0)
        let clean = try CLI.run(["verify", "--store", a])
        #expect(clean.status == 0, "\(clean)")
    }

    @Test("a snapshot past the log's head: writers refuse the store naming both positions, verify fails, snapshot delete removes it")
    func snapshotAheadOfTheLog() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let a = try Self.makeStore(dir, "a", Self.usersItems(3, prefix: "alice"))
        let b = try Self.makeStore(dir, "b", Self.usersItems(6, prefix: "bob"))
        #expect(try CLI.run(["snapshot", "create", "--store", b]).status == 0)
        try FileManager.default.createDirectory(atPath: a + "/snapshots", withIntermediateDirectories: true)
        let name = "00000000000000000006.snapshot"
        try FileManager.default.copyItem(atPath: b + "/snapshots/" + name, toPath: a + "/snapshots/" + name)
        let log = try Data(contentsOf: URL(fileURLWithPath: a + "/data.mdb"))
        let write = try dir.file("write.jsonl", Self.usersItems(1, prefix: "carol"))
        for command in [["apply", "--store", a, write], ["replay", "--store", a], ["snapshot", "create", "--store", a]] {
            let run = try CLI.runBounded(command)
            #expect(run.exited && run.status == 1 && run.stderr.contains("lost records") && run.stderr.contains("position 6")
                    && run.stderr.contains("head is 3"), "\(command[0]): \(run)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: a + "/data.mdb")) == log)
        let verify = try CLI.run(["verify", "--store", a])
        #expect(verify.status == 1 && verify.stderr.contains("lost records") && verify.stderr.contains("ahead of the log (its head is 3)"), "\(verify)")
        #expect(try CLI.run(["snapshot", "delete", "6", "--store", a]).status == 0)
        #expect(try CLI.run(["apply", "--store", a, write]).status == 0)
    }
}
