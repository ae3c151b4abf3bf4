import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

/// The engine's replay over the real views: what `eventlog replay` runs.
@Suite("Replay of the activity and Core Spotlight views")
struct EngineReplayTests {
    @Test("verification by rebuild, a snapshot with a tail, and time travel agree with the live views")
    func replayOverRealViews() throws {
        let travelled = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: travelled) }
        try withReopenedSpotlightStore { store in
            var spotlight = RandomSpotlight(seed: 11)
            var activities = RandomCommands(seed: 11)
            var outcomes = Outcomes()
            func run(_ steps: Range<Int>) throws {
                for step in steps {
                    let commands = step % 3 == 0 ? [activities.command(step: step)] : spotlight.commands(step: step)
                    try outcomes.run { _ = try store.write(commands, at: at(Double(step))) }
                }
            }
            try run(0..<600)
            #expect(outcomes.accepted >= 300 && outcomes.rejectedCount >= 30, "\(outcomes)")
            let events = store.eventStore
            let full = try events.verifyViews(full: true)
            #expect(full.isEqual, "\(String(describing: full.difference))")
            try events.waitForIndex()
            let snapshot = try events.createSnapshot()
            // Every database of every view is in the snapshot, and the index's in its own: search.masks included.
            let listed = Set(store.indexViews.all.flatMap(\.databaseNames))
            #expect(listed.contains("search.masks"))
            let indexSnapshot = try #require(try events.snapshots(of: .index).last)
            #expect(indexSnapshot.position == snapshot.position)
            try run(600..<700)
            let report = try events.rebuild()
            #expect(report.snapshot == snapshot.position, "the snapshot was not used: \(report)")
            #expect(report.damagedSnapshots.isEmpty)
            #expect(report.index?.snapshot == snapshot.position, "the index's snapshot was not used: \(report)")
            #expect(try events.verifyViews(full: true).isEqual)
            try events.replay(through: snapshot.position, into: travelled)
        }
        let old = try ActivityStore(path: travelled, options: testOptions())
        #expect(try old.eventStore.verify().isValid)
        #expect(try old.eventStore.verifyViews(full: true).isEqual)
    }
}
