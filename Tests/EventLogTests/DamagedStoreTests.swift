import EventLog
import Foundation
import LMDB
import Testing

/// SPEC §2, "Damaged files are errors, never crashes", at the engine:
/// loops over the log, writers without their lock file, another program's
/// environment, a directory that may not be read.
@Suite("Damaged stores are errors")
struct DamagedStoreTests {
    /// Runs `body` and fails unless it throws a corrupt-store error naming `position` within a few seconds.
    static func expectCorrupt(at position: UInt64, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                              _ body: () throws -> Void) {
        let started = ContinuousClock.now
        do {
            try body()
            Issue.record("\(what): no error", sourceLocation: sourceLocation)
        } catch let error as EventLogError {
            #expect(error.code == .corrupt && error.position == position, "\(what): \(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(what): \(error)", sourceLocation: sourceLocation)
        }
        // The old loops spun here forever; a bound far above any machine's.
        #expect(ContinuousClock.now - started < .seconds(60), "\(what) took \(ContinuousClock.now - started)", sourceLocation: sourceLocation)
    }

    @Test("every loop over the log stops at a key out of order and names the position: reads, verify, rebuild, replay, time travel, shipping's reads")
    func loopsStopAtAKeyOutOfOrder() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        for n in 0..<100 { try store.append([event("test.happened", n)]) }
        // Damaged while the store is open (its pages were checked when it opened).
        #expect(try DataFileDamage.replaceLogKey(in: dir.sub("data.mdb"), position: 63, with: 65_087) > 0)
        Self.expectCorrupt(at: 63, "events") { _ = try store.events() }
        Self.expectCorrupt(at: 63, "forEachEvent") { try store.forEachEvent { _ in true } }
        Self.expectCorrupt(at: 63, "records(after:)") { _ = try store.records(after: 50) }
        Self.expectCorrupt(at: 63, "rebuild") { try store.rebuild(full: true) }
        Self.expectCorrupt(at: 63, "verifyViews") { _ = try store.verifyViews(full: true) }
        Self.expectCorrupt(at: 63, "replay(through:into:)") { try store.replay(through: 70, into: dir.sub("travel")) }
        let report = try store.verify()
        #expect(report.firstProblem?.position == 63, "\(String(describing: report.firstProblem))")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("travel/data.mdb"))
            || (try? EventStore<CountingViews>(path: dir.sub("travel"), options: fastOptions()).head()) ?? 0 < 63)
        // Scratch environments of the failed rebuilds are gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("replay-scratch-") }.isEmpty)
    }

    @Test("opened after the damage, the store refuses at once, naming the position")
    func damagedBeforeOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            for n in 0..<100 { try store.append([event("test.happened", n)]) }
        }
        #expect(try DataFileDamage.replaceLogKey(in: dir.sub("data.mdb"), position: 63, with: 65_087) > 0)
        for readOnly in [false, true] {
            var options = fastOptions()
            options.readOnly = readOnly
            Self.expectCorrupt(at: 63, "open, readOnly \(readOnly)") { _ = try EventStore<CountingViews>(path: dir.path, options: options) }
        }
    }

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

    @Test("a directory with another program's LMDB environment is refused by every open, and nothing is written to it")
    func foreignEnvironment() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let environment = try Environment(path: dir.path)
            let db: Database<String, String> = try environment.write { try $0.createDatabase("their-data") }
            try environment.write { try db.put("theirs", forKey: "k", in: $0) }
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.sub("data.mdb")))
        for readOnly in [false, true] {
            var options = fastOptions()
            options.readOnly = readOnly
            #expect { _ = try EventStore<CountingViews>(path: dir.path, options: options) } throws: { error in
                (error as? EventLogError)?.code == .storeMissing && "\(error)".contains("without an event log") && "\(error)".contains("their-data")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.sub("data.mdb"))) == before)
        let names = try Environment(path: dir.path).read { try $0.databaseNames() }
        #expect(names == ["their-data"])
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
