import EventLog
import Foundation
import LMDB
import Testing

/// SPEC §2, "Damaged files are errors, never crashes", at the engine:
/// loops over the log, another program's environment. Those that need
/// another process (writers without their lock file, a directory that may
/// not be read) are in `Tools/Tests/EventLogProcessTests`.
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
}
