import Foundation
import LMDB
import Testing

@Suite("Compaction of an environment")
struct EnvironmentCompactionTests {
    /// Whether the file at `path` contains `needle`.
    static func file(_ path: String, contains needle: String) throws -> Bool {
        try Data(contentsOf: URL(fileURLWithPath: path)).firstRange(of: Data(needle.utf8)) != nil
    }

    @Test("deleted values stay in the file's free pages until compaction; after it the file holds the live entries only, smaller, and takes writes with the next transaction id")
    func dropsFreedPages() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let data = (path as NSString).appendingPathComponent("data.mdb")
        do {
            let env = try Environment(path: path)
            let db = try env.write { try $0.createDatabase("things", as: UInt64.self, String.self) }
            try env.write { txn in
                for n: UInt64 in 0..<2_000 { try db.put("value \(n) " + (n % 2 == 0 ? "KEEPME" : "GONEMARKER") + String(repeating: ".", count: 200), forKey: n, in: txn) }
            }
            try env.write { txn in
                for n: UInt64 in stride(from: 1, to: 2_000, by: 2) { try db.delete(n, in: txn) }
            }
            // A few more commits, so that the freed pages are not all reused at once.
            for n: UInt64 in 0..<3 { try env.write { txn in try db.put("later \(n)", forKey: 10_000 + n, in: txn) } }
        }
        #expect(try Self.file(data, contains: "GONEMARKER"), "LMDB reused every freed page: the test proves nothing")
        let before = try FileManager.default.attributesOfItem(atPath: data)[.size] as? Int ?? 0

        var seen: [CompactionStep] = []
        let steps = StepLog()
        let report = try Environment.compact(path: path, beforeSwap: { old, copy in
            let count = { (env: Environment) in
                try env.read { txn in try txn.openDatabase("things", as: UInt64.self, String.self).statistics(in: txn).entries }
            }
            let (a, b) = (try count(old), try count(copy))
            #expect(a == 1_003 && b == 1_003)
        }, progress: { steps.append($0.step) })
        seen = steps.all
        #expect(report.bytesBefore == before)
        #expect(report.bytesAfter < before, "\(report)")
        #expect(!report.removedLeftover)
        #expect(Array(Set(seen)).sorted { $0.order < $1.order } == CompactionStep.allCases, "\(seen)")
        #expect(try !Self.file(data, contains: "GONEMARKER"))
        #expect(try Self.file(data, contains: "KEEPME"))
        #expect(!FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent(Environment.compactionCopyName)))

        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("things", as: UInt64.self, String.self) }
        #expect(env.info().lastTransaction == 1, "the copy's meta page holds transaction 1; an open that changes nothing commits nothing")
        try env.write { txn in try db.put("after", forKey: 20_000, in: txn) }
        #expect(try env.read { txn in (txn.id, try db.get(20_000, in: txn), try db.get(0, in: txn)?.hasPrefix("value 0 KEEPME")) }
            == (2, "after", true))
    }

    @Test("stale bytes LMDB's compacting copy carries: a one-page overflow value's tail (a page buffer recycled from an earlier commit), and, through the copy's reused write buffer, the free middle of leaf pages written after it; both zeroed")
    func staleBytes() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let data = (path as NSString).appendingPathComponent("data.mdb")
        do {
            let env = try Environment(path: path)
            let (a, b, c) = try env.write { txn in
                (try txn.createDatabase("a", as: UInt64.self, String.self), try txn.createDatabase("b", as: UInt64.self, String.self),
                 try txn.createDatabase("c", as: UInt64.self, String.self))
            }
            // Pages full of the marker, written and committed: their buffers are recycled.
            try env.write { txn in
                for n: UInt64 in 0..<2_000 { try c.put(String(repeating: "TAILMARKER", count: 30), forKey: n, in: txn) }
            }
            // Values of 2.5 KB, one overflow page each from the recycled buffers: over 1 MiB of them.
            try env.write { txn in
                for n: UInt64 in 0..<400 { try a.put(String(repeating: "x", count: 2_500), forKey: n, in: txn) }
            }
            try env.write { txn in
                for n: UInt64 in 0..<2_000 { try c.delete(n, in: txn) }
            }
            // Then 3 MiB of leaf pages, inserted out of order so that they are part empty: the copy
            // writes them after a's pages, into the buffers that held those pages.
            try env.write { txn in
                for n: UInt64 in 0..<30_000 { try b.put(String(repeating: "b", count: 100), forKey: (n &* 2_654_435_761) % 1_000_003, in: txn) }
            }
        }
        let report = try Environment.compact(path: path, beforeSwap: { _, _ in })
        #expect(report.bytesZeroed > 0, "no stale byte in the copy: \(report)")
        #expect(try !Self.file(data, contains: "TAILMARKER"))
        let env = try Environment(path: path)
        let a = try env.write { try $0.createDatabase("a", as: UInt64.self, String.self) }
        let b = try env.write { try $0.createDatabase("b", as: UInt64.self, String.self) }
        #expect(try env.read { txn in try (0..<400).allSatisfy { try a.get($0, in: txn) == String(repeating: "x", count: 2_500) } })
        #expect(try env.read { txn in try b.statistics(in: txn).entries } == 30_000)
    }

    @Test("refused while this process has the environment open; a copy left by a killed compaction is removed by the next one and by an open for writing; a throwing check keeps the old file")
    func refusalsAndLeftovers() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let copy = (path as NSString).appendingPathComponent(Environment.compactionCopyName)
        do {
            let env = try Environment(path: path)
            let db = try env.write { try $0.createDatabase("things", as: UInt64.self, String.self) }
            try env.write { txn in try db.put("one", forKey: 1, in: txn) }
            #expect(throws: EnvironmentAlreadyOpenError.self) { try Environment.compact(path: path, beforeSwap: { _, _ in }) }
        }
        struct Refused: Error {}
        let data = try Data(contentsOf: URL(fileURLWithPath: (path as NSString).appendingPathComponent("data.mdb")))
        #expect(throws: Refused.self) { try Environment.compact(path: path, beforeSwap: { _, _ in throw Refused() }) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: (path as NSString).appendingPathComponent("data.mdb"))) == data)
        #expect(!FileManager.default.fileExists(atPath: copy))

        // What a compaction killed before its rename leaves.
        #expect(FileManager.default.createFile(atPath: copy, contents: Data("half a copy".utf8)))
        #expect(try Environment.compact(path: path, beforeSwap: { _, _ in }).removedLeftover)
        #expect(FileManager.default.createFile(atPath: copy, contents: Data("half a copy".utf8)))
        var readOnly = EnvironmentOptions()
        readOnly.readOnly = true
        _ = try Environment(path: path, options: readOnly)
        #expect(FileManager.default.fileExists(atPath: copy), "a read-only open writes nothing")
        _ = try Environment(path: path)
        #expect(!FileManager.default.fileExists(atPath: copy), "an open for writing removes it")
    }

    @Test("a holder of the directory's lock without LMDB's (a child between fork and exec): refused when it stays, waited for when it goes")
    func holderWithoutLMDBLock() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let env = try Environment(path: path)
            let db = try env.write { try $0.createDatabase("things", as: UInt64.self, String.self) }
            try env.write { txn in try db.put("one", forKey: 1, in: txn) }
        }
        // `flock(1)` takes the directory's lock shared, as an opener does,
        // and never opens `lock.mdb`: what a child of a process that has the
        // store open holds until its `exec`.
        let held = path + ".held"
        defer { try? FileManager.default.removeItem(atPath: held) }
        let holder = try Self.spawnGroup("/usr/bin/flock", ["-s", path, "-c", "touch \(held); exec sleep 60"])
        defer { kill(-holder, SIGKILL); var status: Int32 = 0; waitpid(holder, &status, 0) }
        var waited = 0
        while !FileManager.default.fileExists(atPath: held) && waited < 30_000 { usleep(10_000); waited += 10 }
        #expect(FileManager.default.fileExists(atPath: held), "flock never took the lock")

        // It stays: refused (after the short wait), naming no pid.
        #expect { try Environment.compact(path: path, beforeSwap: { _, _ in }) } throws: { error in
            guard let busy = error as? EnvironmentBusyError else { return false }
            return !"\(busy)".contains("(pid")
        }
        // It goes while the compaction waits: the compaction runs.
        let killer = Thread { usleep(20_000); kill(-holder, SIGKILL) }
        killer.start()
        let result = try Environment.compact(path: path, beforeSwap: { _, _ in })
        #expect(!result.removedLeftover)
        let env = try Environment(path: path)
        let db = try env.write { try $0.openDatabase("things", as: UInt64.self, String.self) }
        #expect(try env.read { try db.get(1, in: $0) } == "one")
    }

    /// Starts `path` in a process group of its own (so that `kill(-pid, …)`
    /// reaches what it runs), its output to /dev/null; its pid.
    static func spawnGroup(_ path: String, _ arguments: [String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, &argv, environ)
        guard spawned == 0 else { throw LMDBError(code: spawned, call: "posix_spawn(\(path))") }
        return pid
    }
}

/// Steps reported from the compaction's threads.
final class StepLog: @unchecked Sendable {
    private let lock = NSLock()
    private var steps: [CompactionStep] = []

    func append(_ step: CompactionStep) {
        lock.lock()
        steps.append(step)
        lock.unlock()
    }

    var all: [CompactionStep] {
        lock.lock()
        defer { lock.unlock() }
        return steps
    }
}

extension CompactionStep {
    var order: Int { Self.allCases.firstIndex(of: self)! }
}
