import Foundation
import Testing

/// SPEC §2 "Reading never writes", beside another process (`SyntheticAppender`)
/// that holds the store's write transaction or its reader slots, or that
/// stamps a view's checkpoint. The rest of the suite is in
/// `Tests/EventLogCLITests/ReadOnlyCommandTests.swift`.
@Suite("read commands open the store read-only: other processes", .serialized)
struct ReadOnlyCommandProcessTests {
    @Test("another process holds the write transaction for 20 seconds: every read command exits 0 in under 2 seconds, while it still holds")
    func readsBesideAHeldWriter() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        // It holds for 20 seconds at least, and for as long as the reads take on a slow machine
        // (up to 120): each read must be done while the lock is held for the test to mean anything.
        let holder = try Holder([CLI.product("SyntheticAppender").path, "hold-write", "--store", store, "--seconds", "120"])
        defer { if holder.process.isRunning { kill(holder.process.processIdentifier, SIGKILL) } }
        #expect(holder.waitFor("holding").contains("holding"))
        let held = DispatchTime.now().uptimeNanoseconds
        // The audits that read the live store and build elsewhere (a scratch environment, a new store).
        let audits = [["replay", "--verify", "--json", "--store", store],
                      ["replay", "--to", "3", "--into", dir.sub("as-of-3"), "--json", "--store", store]]
        for command in Stores.readCommands(store) + audits {
            // From process start to exit: the bound an operator sees.
            let started = DispatchTime.now().uptimeNanoseconds
            let run = try CLI.run(command)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            #expect(run.status == 0, "\(command): \(run.stderr)")
            #expect(seconds < 2, "\(command[0]) took \(seconds) s beside a held writer")
            #expect(holder.process.isRunning, "\(command[0]) finished after the writer let go: the test proves nothing")
        }
        // The lock is really held: a write waits for it, until killed. (SIGKILL: a child of the test
        // runner may inherit SIGTERM blocked, and would then wait out the holder.)
        let blocked = try CLI.run(["apply", "--store", store, "-"], input: Sample.good[0],
                                  executable: URL(fileURLWithPath: "/usr/bin/timeout"), prefix: ["-s", "KILL", "1", CLI.executable.path])
        // timeout kills its own process group too, so it reports the signal (9) or its exit for it (137).
        #expect([SIGKILL, 128 + SIGKILL].contains(blocked.status), "apply did not wait for the writer: \(blocked.status) \(blocked.stderr)")
        #expect(holder.process.isRunning)
        let heldFor = Double(DispatchTime.now().uptimeNanoseconds - held) / 1e9
        if heldFor < 20 { Thread.sleep(forTimeInterval: 20 - heldFor) }
        #expect(holder.process.isRunning, "the writer let go before 20 seconds")
        // SIGKILL: a writer killed inside its transaction leaves the store as it was (LMDB's robust lock).
        kill(holder.process.processIdentifier, SIGKILL)
        holder.process.waitUntilExit()
        #expect(try CLI.run(["apply", "--store", store, "-"], input: Sample.good[0]).status == 0, "the store takes writes again")
    }

    @Test("every reader slot taken by another process: a read command is a clear error, not a crash; once that process is killed, its slots are reclaimed")
    func readerSlotsFull() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        let holder = try Holder([CLI.product("SyntheticAppender").path, "hold-readers", "--store", store, "--count", "1024", "--seconds", "120"])
        defer { if holder.process.isRunning { kill(holder.process.processIdentifier, SIGKILL) } }
        #expect(holder.waitFor("holding").contains("holding 1024"))
        let refused = try CLI.run(["items", "--store", store, "--json"])
        #expect(refused.status == 1, "\(refused.status): \(refused.stderr)")
        #expect(refused.stderr.hasPrefix("eventlog items: mdb_txn_begin("), "\(refused.stderr)")
        #expect(refused.stderr.contains("all 1024 reader slots are taken"), "\(refused.stderr)")
        kill(holder.process.processIdentifier, SIGKILL)
        holder.process.waitUntilExit()
        let items = try CLI.run(["items", "--store", store, "--json"])
        #expect(items.status == 0, "\(items.stderr)")
        #expect(try !items.objects().isEmpty)
    }

    @Test("views that lag the log: reads refuse and say by how much, --allow-lagging-views serves them with a warning, stats shows it, nothing is rebuilt")
    func laggingViews() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        let before = try CLI.run(["stats", "--json", "--store", store]).object()
        let head = try #require(before["head"] as? Int)
        let version = try #require((before["views"] as? [[String: Any]])?.first { $0["projection"] as? String == "spotlight.items" }?["version"] as? Int)
        // As if another build appended two events that this projection never saw.
        let set = try CLI.spawnAndWait(CLI.product("SyntheticAppender").path,
                                       arguments: ["set-checkpoint", "--store", store, "--projection", "spotlight.items", "--position", "\(head - 2)", "--version", "\(version)"],
                                       environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil)
        #expect(set == 0)

        let refused = try CLI.run(["search", "latte", "--store", store, "--json"])
        #expect(refused.status != 0 && refused.stdout.isEmpty)
        #expect(refused.stderr.contains("projection spotlight.items is 2 events behind the log (applied through \(head - 2), head \(head))"), "\(refused.stderr)")
        #expect(refused.stderr.contains("eventlog replay") && refused.stderr.contains("--allow-lagging-views"))
        let served = try CLI.run(["search", "latte", "--store", store, "--json", "--allow-lagging-views", "--now", Sample.now])
        #expect(served.status == 0)
        #expect(try !served.objects().isEmpty)
        #expect(served.stderr.contains("warning: the views lag the log"))
        // The engine cannot know which views a read touches, so every view read refuses; the log is read as ever.
        #expect(try CLI.run(["items", "--store", store, "--json"]).status != 0)
        #expect(try CLI.run(["log", "--store", store, "--json"]).status == 0)
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
        let stats = try CLI.run(["stats", "--store", store, "--json"]).object()
        let views = try #require(stats["views"] as? [[String: Any]])
        let items = try #require(views.first { $0["projection"] as? String == "spotlight.items" })
        #expect(items["behind"] as? Int == 2 && items["checkpoint"] as? Int == head - 2 && items["current"] as? Bool == false)
        #expect(views.filter { $0["current"] as? Bool == true }.count == views.count - 1)
        let text = try CLI.run(["stats", "--store", store]).stdout
        #expect(text.contains("BEHIND: projection spotlight.items is 2 events behind"))
        // Built by another version: refused even with the flag; still not rebuilt.
        let other = try CLI.spawnAndWait(CLI.product("SyntheticAppender").path,
                                         arguments: ["set-checkpoint", "--store", store, "--projection", "spotlight.items", "--position", "\(head)", "--version", "99"],
                                         environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil)
        #expect(other == 0)
        let refusedAgain = try CLI.run(["search", "latte", "--store", store, "--json", "--allow-lagging-views"])
        #expect(refusedAgain.status != 0 && refusedAgain.stderr.contains("was built by version 99, this code's is \(version)"), "\(refusedAgain.stderr)")
        let after = try #require(try CLI.run(["stats", "--store", store, "--json"]).object()["views"] as? [[String: Any]])
        #expect(after.first { $0["projection"] as? String == "spotlight.items" }?["storedVersion"] as? Int == 99, "a read rebuilt the view")
    }
}
