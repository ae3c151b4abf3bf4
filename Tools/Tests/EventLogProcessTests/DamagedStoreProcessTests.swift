import EventLog
import Foundation
import LMDB
import Testing

/// SPEC §2, "Damaged files are errors, never crashes", with another process
/// (`SyntheticAppender`): a writer without its lock file, a store another user
/// may not reach. The rest of the suite is in
/// `Tests/EventLogTests/DamagedStoreTests.swift`.
@Suite("Damaged stores are errors: other processes")
struct DamagedStoreProcessTests {
    @Test("a writer whose lock.mdb was deleted waits for the writer that holds the data file, and a writer of the old lock file refuses")
    func deletedLockFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let environment = try Environment(path: dir.path)
            let db: Database<String, UInt64> = try environment.write { try $0.createDatabase("values") }
            try environment.write { try db.put(1, forKey: "before", in: $0) }
        }
        // Another process holds the write transaction for 3 s; lock.mdb goes under it.
        let holder = try ChildProcess("SyntheticAppender", ["hold-write", "--store", dir.path, "--seconds", "3"])
        _ = try holder.waitFor("holding")
        let held = ContinuousClock.now
        try FileManager.default.removeItem(atPath: dir.sub("lock.mdb"))
        // This open makes a new lock.mdb, with a free writer lock: the data
        // file's lock is what keeps this write from running beside the holder's.
        let environment = try Environment(path: dir.path)
        let db: Database<String, UInt64> = try environment.write { try $0.createDatabase("values") }
        try environment.write { try db.put(2, forKey: "after", in: $0) }
        #expect(ContinuousClock.now - held >= .seconds(2.5), "the write ran beside the holder's: \(ContinuousClock.now - held)")
        _ = holder.finish()
        #expect(try environment.read { try db.get("before", in: $0) } == 1)
        #expect(try environment.read { try db.get("after", in: $0) } == 2)

        // A process that opened before the lock file was replaced refuses to write, and to read.
        let other = TemporaryDirectory()
        defer { other.remove() }
        let old = try Environment(path: other.path)
        let values: Database<String, UInt64> = try old.write { try $0.createDatabase("values") }
        try FileManager.default.removeItem(atPath: other.sub("lock.mdb"))
        #expect { try old.write { try values.put(3, forKey: "lost", in: $0) } } throws: {
            ($0 as? LockFileReplacedError)?.removed == true && "\($0)".contains("lock.mdb")
        }
        #expect(throws: LockFileReplacedError.self) { try old.read { _ in } }
    }

    @Test("a store this user may not reach is permission denied, not a missing store",
          .enabled(if: getuid() == 0, "needs root to become nobody"))
    func permissionDenied() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        do {
            let events = try EventStore<CountingViews>(path: store, options: fastOptions())
            try events.append([event("test.happened", 1)])
        }
        #expect(chmod(dir.path, 0o755) == 0 && chmod(store, 0o000) == 0)
        defer { chmod(store, 0o755) }
        let child = try ChildProcess("SyntheticAppender", ["verify", "--store", store], capturingErrors: true,
                                     through: ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        let (_, status, errors) = child.finishWithErrors()
        #expect(status != 0)
        #expect(errors.contains("permission denied") && !errors.contains("no store"), "\(errors)")
    }
}
