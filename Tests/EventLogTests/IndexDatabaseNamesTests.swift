import EventLog
import Foundation
import LMDB
import Testing

/// Each database lives in one environment: a set whose index opens a
/// database of the log's views would have that database taken, at the
/// next open for writing, for an index a one-environment store left in
/// the log, and dropped.
@Suite("The index's databases and the log's")
struct IndexDatabaseNamesTests {
    @Test("a set whose index opens a database the log's views open is refused at open, naming it; the log's view keeps its data")
    func sharedNameRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append([event("test.fine", 1), event("test.fine", 2)])
        }
        #expect {
            _ = try EventStore<CountsAndIndex<SharedNameIndex>>(path: dir.path, options: fastOptions())
        } throws: { error in
            guard let error = error as? EventLogError else { return false }
            return error.code == .invalidArgument && "\(error)".contains("\"test.typeCounts\"")
        }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        #expect(try store.read { try store.views.counts.total(in: $0) } == 2)
    }
}

/// ``TypeCounts`` in the index's environment too: the same database name twice.
struct SharedNameIndex: TestIndex {
    let counts: TypeCounts
    init(openingIn txn: WriteTransaction) throws { counts = try TypeCounts(openingIn: txn) }
    var all: [any Projection] { [counts] }
}
