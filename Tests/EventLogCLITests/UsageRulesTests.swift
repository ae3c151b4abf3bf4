import Foundation
import Testing

/// Decisions of the command line, each a rule with its test: a repeated
/// single-valued option and `--store ""` are usage errors that run nothing;
/// `stats` shows the oldest read transaction's age and warns of an old one;
/// a writer that stops mid-stream still says what it committed.
@Suite("Usage rules of the command line")
struct UsageRulesTests {
    @Test("a single-valued option given twice is a usage error (64) naming it and its values, on every command, before anything runs: forget --user alice --user bob forgets no one")
    func repeatedOptions() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl",
            DerivedHistoryTests.usersItems(2, prefix: "alice") + DerivedHistoryTests.usersItems(2, prefix: "bob"))]).status == 0)
        let log = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
        let commands: [[String]] = [
            ["forget", "--store", store, "--user", "alice-0", "--user", "bob-0"],
            ["forget", "--store", store, "--user=alice-0", "--user", "bob-0"],
            ["forget", "--user", "alice-0", "--store", store, "--store", dir.sub("other")],
            ["apply", "--store", store, "--transaction-size", "1", "--transaction-size", "2", "-"],
            ["items", "--store", store, "--user", "alice-0", "--user", "bob-0", "--json"],
            ["search", "--store", store, "--limit", "1", "--limit", "2", "word"],
            ["replay", "--store", store, "--to", "1", "--to", "2", "--into", dir.sub("then")],
            ["snapshot", "create", "--store", store, "--store", store],
        ]
        for command in commands {
            let run = try CLI.runBounded(command.map { Array($0.utf8) })
            #expect(run.exited && run.status == 64, "\(command): \(run)")
            #expect(run.stderr.contains("is given 2 times") && run.stderr.contains("give it once"), "\(command): \(run.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == log, "a refused command wrote")
        #expect(try DerivedHistoryTests.users(store).count == 4)
        #expect(!FileManager.default.fileExists(atPath: dir.sub("then")) && !FileManager.default.fileExists(atPath: store + "/snapshots"))
    }

    @Test("--store \"\" is a usage error (64), and creates nothing in the working directory")
    func emptyStorePath() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let ops = try dir.file("ops.jsonl", Sample.good)
        let cwd = dir.sub("cwd")
        try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: false)
        for command in [["apply", "--store", "", ops], ["items", "--store", ""], ["verify", "--store="], ["replay", "--store", ""],
                        ["replay", "--to", "1", "--into", ""]] {
            let out = try dir.file("out", [])
            let status = try StoreFilesTests.run(in: Array(cwd.utf8), command, stdout: out)
            #expect(status == 64, "\(command): \(status)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: cwd).isEmpty, "a store was made in the working directory")
    }

    @Test("a read transaction held across many commits: stats shows the oldest reader's pid and age in transactions, and warns")
    func oldReader() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("first.jsonl", [Sample.good[0]])]).status == 0)
        let ready = try dir.file("ready", [])
        let holder = try CLI.spawn("/usr/bin/python3", arguments: ["-c", """
            import lmdb, time
            env = lmdb.open('\(store)', readonly=True, max_dbs=64)
            txn = env.begin()
            open('\(ready)', 'w').write('ready')
            time.sleep(120)
            """], environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil)
        defer {
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(30)
        while (try? String(contentsOfFile: ready, encoding: .utf8)) != "ready" && Date() < deadline { usleep(20_000) }
        let quiet = try CLI.run(["stats", "--store", store, "--json"])
        let young = try #require((try quiet.object()["readers"] as? [String: Any])?["oldest"] as? [String: Any], "\(quiet.stdout)")
        #expect(young["pid"] as? Int == Int(holder.processIdentifier) && (young["age"] as? Int ?? 99) < 5, "\(young)")
        #expect(!quiet.stderr.contains("warning"))
        let commits = try dir.file("commits.jsonl", DerivedHistoryTests.usersItems(120, prefix: "u"))
        #expect(try CLI.run(["apply", "--store", store, "--transaction-size", "1", "--pipeline", "0", commits]).status == 0)
        let stats = try CLI.run(["stats", "--store", store, "--json"])
        let oldest = try #require((try stats.object()["readers"] as? [String: Any])?["oldest"] as? [String: Any], "\(stats.stdout)")
        #expect(oldest["pid"] as? Int == Int(holder.processIdentifier))
        #expect((oldest["age"] as? Int ?? 0) >= 120, "\(oldest)")
        #expect(stats.stderr.contains("warning: process \(holder.processIdentifier) has held a read transaction for"), "\(stats.stderr)")
        let text = try CLI.run(["stats", "--store", store])
        #expect(text.stdout.contains("the oldest read transaction (process \(holder.processIdentifier))"), "\(text.stdout)")
    }

    @Test("apply --json stopped mid-stream (its lock.mdb replaced): it still prints how many lines it committed and through which line, and why it stopped")
    func reportAtRefusal() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("first.jsonl", [Sample.good[0]])]).status == 0)
        let slow = try SlowWriter(store: store, in: dir, extra: ["--json"])
        for n in 0..<5 { slow.send(#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"slow-\#(n)"}]}"#) }
        let deadline = Date().addingTimeInterval(60)
        func items() throws -> Int { try CLI.run(["items", "--store", store, "--json"]).objects().count }
        while try items() < 5 && Date() < deadline { usleep(50_000) }
        try FileManager.default.removeItem(atPath: store + "/lock.mdb")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("other.jsonl", [#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"other"}]}"#])]).status == 0)
        slow.send(#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"slow-5"}]}"#)
        let (status, errors) = slow.finish()
        #expect(status == 1, "\(errors)")
        let printed = try String(contentsOfFile: slow.output, encoding: .utf8)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any], "stdout: \(printed)")
        #expect(summary["applied"] as? Int == 5 && summary["committedThrough"] as? Int == 5, "\(summary)")
        #expect((summary["error"] as? String)?.contains("lock.mdb") == true, "\(summary)")
    }
}
