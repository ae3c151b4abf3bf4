import Foundation
import Testing

/// SPEC §2 "Reading never writes": every command that only reads opens the
/// store read-only, so it never waits for a writer and works on a store it
/// may not write.
@Suite("read commands open the store read-only", .serialized)
struct ReadOnlyCommandTests {
    /// Every command that only reads, with arguments that find something in `Sample.good`.
    static func readCommands(_ store: String) -> [[String]] {
        [
            ["items", "--json"], ["items", "--domain", "orders", "--json"],
            ["search", "latte", "--now", Sample.now, "--json"],
            ["query", #"title == "Oat*""#, "--now", Sample.now, "--json"],
            ["log", "--json"], ["current", "--json"], ["saved", "--json"], ["stats", "--json"], ["verify", "--json"],
            ["client-state", "--json"], ["resolve", "order-42", "--json"],
            ["handoff", "--user", "u1", "--device", "tablet", "--now", Sample.now, "--json"],
            ["users", "--json"], ["suggestions", "--user", "u1", "--now", Sample.now, "--json"],
            ["snapshot", "list", "--json"],
        ].map { $0 + ["--store", store] }
    }

    @Test("another process holds the write transaction for 20 seconds: every read command exits 0 in under 2 seconds, while it still holds")
    func readsBesideAHeldWriter() throws {
        let dir = try ReadCommandTests.store()
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
        for command in Self.readCommands(store) + audits {
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
        let dir = try ReadCommandTests.store()
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

    /// What every read command prints on `store`, through `wrapper` if given.
    func outputs(_ store: String, through wrapper: [String]? = nil) throws -> [String: CLIResult] {
        var outputs: [String: CLIResult] = [:]
        for command in Self.readCommands(store) {
            let run = try wrapper.map { try CLI.run(command, through: $0) } ?? CLI.run(command)
            outputs[command.prefix(while: { !$0.hasPrefix("--") }).joined(separator: " ")] = run
        }
        return outputs
    }

    /// Every read command answers on the restricted store as on the open one (stats aside, whose
    /// reader slots say that no lock file was used), and the store's bytes did not change.
    func expectSameAnswers(_ store: String, through wrapper: [String]) throws {
        let expected = try outputs(store)
        let data = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
        let restricted = try outputs(store, through: wrapper)
        for (command, run) in restricted.sorted(by: { $0.key < $1.key }) {
            #expect(run.status == 0, "\(command): \(run.stderr)")
            if command == "stats" {
                let object = try run.object(), open = try expected[command]!.object()
                #expect((object["readers"] as? [String: Any])?["lockFile"] as? Bool == false)
                for key in ["head", "views", "eventCounts", "databases"] {
                    #expect(jsonEqual(object[key] as Any, open[key] as Any), "stats \(key)")
                }
            } else {
                #expect(run.stdout == expected[command]!.stdout, "\(command)")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == data)
    }

    /// The tests run as root, which ignores permission bits: a chmod'ed
    /// directory would prove nothing. A read-only bind mount in a mount
    /// namespace of its own (`unshare -m`, which root may do here) is what an
    /// audit copy mounted read-only looks like: writes fail with EROFS.
    static let canMountReadOnly: Bool = {
        let status = try? CLI.spawnAndWait("/usr/bin/unshare", arguments: ["-m", "sh", "-c", "mount --bind -o ro /tmp /tmp"],
                                           environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: "/dev/null")
        return status == 0
    }()

    @Test("a store on a read-only mount (bind mount -o ro): every read command answers as before, the store unchanged",
          .enabled(if: canMountReadOnly, "needs unshare -m and mount (root in a namespace)"))
    func readOnlyMount() throws {
        let dir = try ReadCommandTests.store()
        defer { dir.remove() }
        let store = dir.sub("store")
        // `sh -c SCRIPT STORE eventlog ARGS…`: mount the store read-only over itself, then run the command.
        try expectSameAnswers(store, through: ["/usr/bin/unshare", "-m", "sh", "-c",
                                               #"mount --bind -o ro "$0" "$0" && exec "$@""#, store])
        // Proof that the mount is read-only: a write command fails there.
        let write = try CLI.run(["apply", "--store", store, "-"], through: ["/usr/bin/unshare", "-m", "sh", "-c",
                                                                            #"mount --bind -o ro "$0" "$0" && exec "$@""#, store])
        #expect(write.status != 0)
    }

    @Test("a store its user may only read (another owner, 0755/0644): every read command answers as before, with or without lock.mdb",
          .enabled(if: getuid() == 0, "needs root to run the commands as nobody"))
    func unprivilegedReader() throws {
        let dir = try ReadCommandTests.store()
        defer { dir.remove() }
        let store = dir.sub("store")
        // The parents must be searchable by nobody; the store's directories and files
        // (created 0700 and 0600) are opened to others by the operator: 0755 and 0644.
        for path in [dir.path, store, store + "/index"] { #expect(chmod(path, 0o755) == 0) }
        for file in ["data.mdb", "lock.mdb", "index/data.mdb", "index/lock.mdb"] { #expect(chmod(store + "/" + file, 0o644) == 0) }
        let nobody = ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        try expectSameAnswers(store, through: nobody)
        // lock.mdb can be neither written nor created by nobody.
        try FileManager.default.removeItem(atPath: store + "/lock.mdb")
        let stats = try CLI.run(["stats", "--json", "--store", store], through: nobody)
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store + "/lock.mdb"))
        let write = try CLI.run(["apply", "--store", store, "-"], through: nobody)
        #expect(write.status != 0)
    }

    @Test("views that lag the log: reads refuse and say by how much, --allow-lagging-views serves them with a warning, stats shows it, nothing is rebuilt")
    func laggingViews() throws {
        let dir = try ReadCommandTests.store()
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
