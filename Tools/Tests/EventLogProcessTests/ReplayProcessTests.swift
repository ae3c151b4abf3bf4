import EventLog
import Foundation
import LMDB
import SyntheticWorkload
import Testing

/// Rebuilds beside other processes (`SyntheticAppender`): killed midway, and
/// while another process appends. The rest of the suite is in
/// `Tests/EventLogTests/ReplayTests.swift`.
@Suite("Snapshots, rebuild, verification by rebuild, time travel: other processes")
struct ReplayProcessTests {
    @Test("a rebuild killed with SIGKILL midway leaves the live views intact")
    func killedRebuild() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let writer = try ChildProcess("SyntheticAppender", [
            "append", "--store", dir.path, "--batches", "300", "--batch-size", "500", "--durability", "noSync",
        ])
        #expect(writer.finish().status == 0)
        let rebuild = try ChildProcess("SyntheticAppender", ["rebuild", "--store", dir.path])
        // Kill it once it is applying the log, before the swap.
        let handle = rebuild.output.fileHandleForReading
        var seen = ""
        while !seen.contains("log "), let chunk = try handle.read(upToCount: 64), !chunk.isEmpty {
            seen += String(decoding: chunk, as: UTF8.self)
        }
        rebuild.kill()
        let (_, output) = rebuild.finish()
        #expect(!output.contains("rebuilt"), "the rebuild finished before it could be killed")
        let reader = try ChildProcess("SyntheticAppender", ["read", "--store", dir.path, "--batch-size", "500", "--seconds", "0"])
        let (status, verdict) = reader.finish()
        #expect(status == 0, "\(verdict)")
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        #expect(try store.verify().isValid)
        // The next rebuild clears the dead one's scratch environment.
        try store.rebuild()
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("replay-scratch") }
        #expect(leftovers.isEmpty)
    }

    @Test("rebuild and verification run while another process appends")
    func rebuildBesideAWriter() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // The same projections as the other process, which must keep them current too.
        let store = try EventStore<SyntheticViews>(path: dir.path, options: fastOptions())
        try store.append((0..<2000).map {
            NewEvent(type: SyntheticEvent.type, schemaVersion: 1, payload: SyntheticEvent.payload(writer: 1, sequence: UInt64($0), size: 100))
        })
        let writer = try ChildProcess("SyntheticAppender", [
            "append", "--store", dir.path, "--writer", "5", "--batches", "400", "--batch-size", "5", "--durability", "noSync",
        ])
        var rounds = 0
        while writer.process.isRunning || rounds < 2 {
            try store.rebuild()
            let comparison = try store.verifyViews()
            #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
            rounds += 1
        }
        #expect(writer.finish().status == 0)
        #expect(try store.head() == 4000)
        #expect(try store.verifyViews(full: true).isEqual)
        #expect(try store.read { try store.views.progress.counts.get(5, in: $0) } == 2000)
        #expect(try ConsistentPrefix.check(store, batchSize: 5) == nil)
    }
}
