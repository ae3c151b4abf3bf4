import Foundation
import Testing

/// `eventlog compact` refused beside other processes (`SyntheticAppender`
/// holding the store, Python's `lmdb`). The rest of the suite is in
/// `Tests/EventLogCLITests/CompactionCrashTests.swift`.
@Suite("compact, killed and refused: other processes", .serialized)
struct CompactionProcessTests {
    /// The compaction's copy of `data.mdb` (`CompactionCrashTests.copyName`).
    static let copyName = "data.mdb.compacting"

    @Test("refused while another process has the store open (a writer, a read-only reader, another program's reader); the store is untouched; compacts once they are gone")
    func refusedWhileOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        try Stores.compactable(store, dir, rounds: 4)
        let data = (store as NSString).appendingPathComponent("data.mdb")
        var holders: [(String, [String])] = [
            ("a writer", [CLI.product("SyntheticAppender").path, "hold-write", "--store", store, "--seconds", "120"]),
            ("a read-only reader", [CLI.product("SyntheticAppender").path, "hold-readers", "--store", store, "--count", "1",
                                    "--seconds", "120", "--read-only"]),
        ]
        if Self.pythonHasLMDB {
            holders.append(("Python's lmdb", ["/usr/bin/python3", "-c",
                                              "import lmdb, sys, time; e = lmdb.open(sys.argv[1], readonly=True, max_dbs=128); print('holding', flush=True); time.sleep(120)",
                                              store]))
        }
        for (who, command) in holders {
            let before = try Data(contentsOf: URL(fileURLWithPath: data))
            let holder = try Holder(command)
            defer { if holder.process.isRunning { kill(holder.process.processIdentifier, SIGKILL) } }
            #expect(holder.waitFor("holding").contains("holding"), "\(who) did not start")
            let refused = try CLI.run(["compact", "--store", store])
            #expect(refused.status == 1, "\(who): \(refused.status) \(refused.stdout)")
            #expect(refused.stderr.contains("is open in another process (pid \(holder.process.processIdentifier))"), "\(who): \(refused.stderr)")
            #expect(refused.stderr.contains("compaction needs it alone"), "\(who): \(refused.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: data)) == before, "\(who): data.mdb changed")
            #expect(!FileManager.default.fileExists(atPath: (store as NSString).appendingPathComponent(Self.copyName)))
            kill(holder.process.processIdentifier, SIGKILL)
            holder.process.waitUntilExit()
        }
        let compact = try CLI.run(["compact", "--store", store])
        #expect(compact.status == 0, "once they are gone: \(compact.stderr)")
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
    }

    static let pythonHasLMDB: Bool = {
        let status = try? CLI.spawnAndWait("/usr/bin/python3", arguments: ["-c", "import lmdb"],
                                           environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: "/dev/null")
        return status == 0
    }()
}
