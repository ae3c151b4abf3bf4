import EventLog
import Foundation
import LMDB
import SyntheticWorkload
import Testing

/// A projection of this store that another process of an older build does not
/// have. The rest of the suite is in `Tests/EventLogTests/ProjectionTests.swift`.
@Suite("Projections and their checkpoints: other processes")
struct ProjectionProcessTests {
    @Test("while this store stays open, another process of an older build appends: this store's next write catches up first")
    func laggingWhileOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<ProgressAndCounts>(path: dir.path, options: fastOptions())
        try store.append([event("t", 1)])
        try store.append([event("t", 2)])   // a write right after this store's own: nothing to catch up
        // Another process whose views lack TypeCounts appends 15 events.
        let writer = try ChildProcess("SyntheticAppender", [
            "append", "--store", dir.path, "--writer", "7", "--batches", "3", "--batch-size", "5", "--durability", "noSync",
        ])
        #expect(writer.finish().status == 0)
        try store.append([event("t", 18)])
        #expect(try store.head() == 18)
        #expect(try store.read { try store.views.counts.total(in: $0) } == 18)
        #expect(try store.verifyViews(full: true).isEqual)
    }
}

/// The synthetic appender's projection and one it does not have.
struct ProgressAndCounts: ProjectionSet {
    let progress: WriterProgress
    let counts: TypeCounts
    init(openingIn txn: WriteTransaction) throws {
        progress = try WriterProgress(openingIn: txn)
        counts = try TypeCounts(openingIn: txn)
    }
    var all: [any Projection] { [progress, counts] }
}
