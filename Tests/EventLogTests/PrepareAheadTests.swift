@testable import EventLog
import Foundation
import LMDB
import Testing

/// Counts events by type, and prepares ahead: it records which events it
/// prepared and which preparations were let go, and its writer records
/// whether each event it applied had been prepared before.
struct PreparingCounts: Projection {
    let counts: Database<String, UInt64>
    let prepared = Recorder<Position>()
    let released = Recorder<Position>()
    let appliedUnprepared = Recorder<Position>()
    var name: String { "test.preparingCounts" }
    var version: UInt32 { 1 }
    var databaseNames: [String] { ["test.preparingCounts"] }

    init(openingIn txn: WriteTransaction) throws { counts = try txn.createDatabase("test.preparingCounts") }

    func prepareAhead(_ event: RecordedEvent) -> (@Sendable () -> Void)? {
        prepared.append(event.position)
        let released = released
        return { released.append(event.position) }
    }

    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { [prepared, appliedUnprepared] event in
            if !prepared.all.contains(event.position) { appliedUnprepared.append(event.position) }
            let n = try counts.get(event.type, in: txn) ?? 0
            try counts.put(n + 1, forKey: event.type, in: txn)
        }
    }
}

struct PreparingViews: ProjectionSet {
    let counts: PreparingCounts
    init(openingIn txn: WriteTransaction) throws { counts = try PreparingCounts(openingIn: txn) }
    var all: [any Projection] { [counts] }
}

@Suite("Rebuilds prepare events ahead of the writer")
struct PrepareAheadTests {
    @Test("a rebuild prepares every event before applying it, lets every preparation go, and equals the live views")
    func rebuildPreparesAhead() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<PreparingViews>(path: dir.path, options: fastOptions())
        for n in 0..<3_000 { try store.append([event("t\(n % 5)", n, size: 10 + n % 300)]) }
        // The live writes prepare nothing: only a rebuild knows its events in advance.
        #expect(store.views.counts.prepared.all.isEmpty)
        let comparison = try store.verifyViews(full: true)
        #expect(comparison.isEqual)
        #expect(comparison.report.eventsApplied == 3_000)
        try store.rebuild(full: true)
        #expect(try store.verifyViews(full: true).isEqual)
        #expect(try store.read { txn in try store.views.counts.counts.get("t0", in: txn) } == 600)
    }

    @Test("the rebuilt views' projection prepares each event once, in log order, before applying it, and lets each go")
    func preparedInOrder() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<PreparingViews>(path: dir.path, options: fastOptions())
        for n in 0..<2_500 { try store.append([event("t", n, size: 100 + n % 2_000)]) }
        let builder = try ViewBuilder(source: store, targetPath: dir.sub("scratch"), durability: .noSync, progress: nil)
        builder.chunk = 300   // several transactions, each ending between two prefetched events
        _ = try builder.build(through: 2_000, from: [])
        #expect(builder.position == 2_000)
        let counts = builder.views.counts
        #expect(counts.prepared.all == Array(1...2_000))
        #expect(counts.released.all.sorted() == Array(1...2_000))
        #expect(counts.appliedUnprepared.all.isEmpty)
        #expect(try builder.target.read { txn in try counts.counts.get("t", in: txn) } == 2_000)
    }
}
