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
        let store = try EventStore<PoisonableViews>(path: dir.path, options: fastOptions())
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
/// `test.poison`, and counts the others.
struct PoisonedCounts: Projection {
    let counts: Database<String, UInt64>
    var name: String { "test.poisonedCounts" }
    var version: UInt32 { 1 }
    var databaseNames: [String] { ["test.poisonedCounts"] }

    init(openingIn txn: WriteTransaction) throws { counts = try txn.createDatabase("test.poisonedCounts") }

    struct Poisoned: Error, CustomStringConvertible {
        var description: String { "a poisoned event" }
    }

    func prepare(_ event: RecordedEvent, log: LogReader) throws -> (any Sendable)? {
        if event.type == "test.poison" { throw Poisoned() }
        return nil
    }

    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in
            let n = try counts.get(event.type, in: txn) ?? 0
            try counts.put(n + 1, forKey: event.type, in: txn)
        }
    }
}

struct PoisonedIndex: ProjectionList {
    let counts: PoisonedCounts
    var all: [any Projection] { [counts] }
}

/// Counts in the log's environment, and a projection that can be poisoned in the index's.
struct PoisonableViews: ProjectionSet {
    let counts: TypeCounts
    init(openingIn txn: WriteTransaction) throws { counts = try TypeCounts(openingIn: txn) }
    var all: [any Projection] { [counts] }
    func openIndex(in txn: WriteTransaction) throws -> PoisonedIndex { PoisonedIndex(counts: try PoisonedCounts(openingIn: txn)) }
}
