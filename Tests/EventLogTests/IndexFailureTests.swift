import EventLog
import Foundation
import LMDB
import Testing

/// An indexer whose projection cannot apply an event tries again, with a
/// growing pause, and says so in ``EventStore/indexStatus()`` until a
/// commit moves the index on.
@Suite("An indexer that keeps failing")
struct IndexFailureTests {
    @Test("a failing indexer's status keeps its failure, and the time the failures began, across its retries")
    func failureKeptAcrossRetries() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountsAndIndex<PoisonedIndex>>(path: dir.path, options: fastOptions())
        try store.append([event("test.fine", 1)])
        _ = try store.waitForIndex(through: 1, timeout: .seconds(60))
        try store.append([event("test.poison", 2)])
        func status() throws -> IndexStatus { try #require(try store.indexStatus()) }
        let deadline = Date(timeIntervalSinceNow: 60)
        while try status().lastFailure == nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        let first = try status()
        #expect(first.lastFailure?.contains("position 2") == true, "\(String(describing: first.lastFailure))")
        // The retries come 0.05, 0.1, 0.2 and 0.4 s apart: five attempts in
        // the next second, each of which starts again from position 1.
        // Starting again is no success: the failure, and when the failures
        // began, stay as they were.
        let retries = Date(timeIntervalSinceNow: 1)
        while Date() < retries {
            let now = try status()
            #expect(now.lastFailure != nil)
            #expect(now.failingSince == first.failingSince)
            #expect(now.applied == 1)
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}

/// An index projection that throws while preparing an event of type
/// `test.poison`, and counts the others (``TypeCounts``, in a database of
/// its own).
struct PoisonedCounts: Projection {
    let counts: TypeCounts
    var name: String { "test.poisonedCounts" }
    var version: UInt32 { 1 }
    var databaseNames: [String] { counts.databaseNames }

    init(openingIn txn: WriteTransaction) throws { counts = try TypeCounts(openingIn: txn, database: "test.poisonedCounts") }

    struct Poisoned: Error, CustomStringConvertible {
        var description: String { "a poisoned event" }
    }

    func prepare(_ event: RecordedEvent, log: LogReader) throws -> (any Sendable)? {
        if event.type == "test.poison" { throw Poisoned() }
        return nil
    }

    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter { try counts.makeWriter(in: txn) }
}

struct PoisonedIndex: TestIndex {
    let counts: PoisonedCounts
    init(openingIn txn: WriteTransaction) throws { counts = try PoisonedCounts(openingIn: txn) }
    var all: [any Projection] { [counts] }
}
