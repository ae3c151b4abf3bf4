import EventLog
import Foundation
import LMDB
import Testing

// Projections and helpers of the engine's tests. Also compiled into
// Tools/Tests/EventLogProcessTests (a symbolic link to this file), whose
// tests run `SyntheticAppender` in other processes.

/// Counts events by type: the simplest projection that writes as it goes.
struct TypeCounts: Projection {
    let counts: Database<String, UInt64>
    var name: String { "test.typeCounts" }
    var version: UInt32
    let database: String
    var databaseNames: [String] { [database] }

    init(openingIn txn: WriteTransaction, version: UInt32 = 1, database: String = "test.typeCounts") throws {
        counts = try txn.createDatabase(database)
        self.version = version
        self.database = database
    }

    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in
            let n = try counts.get(event.type, in: txn) ?? 0
            try counts.put(n + 1, forKey: event.type, in: txn)
        }
    }

    func total(in txn: ReadTransaction) throws -> UInt64 {
        let cursor = try counts.cursor(in: txn)
        var sum: UInt64 = 0
        var entry = try cursor.first()
        while let (_, value) = entry {
            sum += value
            entry = try cursor.next()
        }
        return sum
    }
}

/// Sums payload bytes, holding the sum in memory until `finish` (the shape
/// of a projection that writes each key once per transaction).
struct PayloadBytes: Projection {
    let totals: Database<String, UInt64>
    var name: String { "test.payloadBytes" }
    var version: UInt32 { 1 }
    var databaseNames: [String] { ["test.payloadBytes"] }

    init(openingIn txn: WriteTransaction) throws { totals = try txn.createDatabase("test.payloadBytes") }

    final class Writer: ProjectionWriter {
        let projection: PayloadBytes
        let txn: WriteTransaction
        var pending: UInt64 = 0
        init(_ projection: PayloadBytes, _ txn: WriteTransaction) { self.projection = projection; self.txn = txn }
        func apply(_ event: RecordedEvent) throws { pending += UInt64(event.payload.count) }
        func finish() throws {
            let total = try projection.totals.get("all", in: txn) ?? 0
            try projection.totals.put(total + pending, forKey: "all", in: txn)
        }
    }

    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter { Writer(self, txn) }

    func total(in txn: ReadTransaction) throws -> UInt64 { try totals.get("all", in: txn) ?? 0 }
}

struct CountingViews: ProjectionSet {
    let counts: TypeCounts
    init(openingIn txn: WriteTransaction) throws { counts = try TypeCounts(openingIn: txn) }
    var all: [any Projection] { [counts] }
}

struct TwoViews: ProjectionSet {
    let counts: TypeCounts
    let bytes: PayloadBytes
    init(openingIn txn: WriteTransaction) throws {
        counts = try TypeCounts(openingIn: txn)
        bytes = try PayloadBytes(openingIn: txn)
    }
    var all: [any Projection] { [counts, bytes] }
}

/// The same counts projection stamped with version 2.
struct CountingViewsV2: ProjectionSet {
    let counts: TypeCounts
    init(openingIn txn: WriteTransaction) throws { counts = try TypeCounts(openingIn: txn, version: 2) }
    var all: [any Projection] { [counts] }
}

/// Index projections opened together in a write transaction of the index's environment.
protocol TestIndex: ProjectionList {
    init(openingIn txn: WriteTransaction) throws
}

/// ``TypeCounts`` in the log's environment, and `Index` in the index's.
struct CountsAndIndex<Index: TestIndex>: ProjectionSet {
    let counts: TypeCounts
    init(openingIn txn: WriteTransaction) throws { counts = try TypeCounts(openingIn: txn) }
    var all: [any Projection] { [counts] }
    func openIndex(in txn: WriteTransaction) throws -> Index { try Index(openingIn: txn) }
}

func event(_ type: String = "test.happened", _ n: Int, size: Int = 64, at: Date? = nil) -> NewEvent {
    var payload = Array("event \(n) ".utf8)
    // Pseudo-random filler (xorshift), which zstd cannot shrink: these records are stored as they are.
    var state = UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15 | 1
    while payload.count < size {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        payload.append(UInt8(truncatingIfNeeded: state))
    }
    return NewEvent(type: type, schemaVersion: 1, payload: payload, at: at)
}

func fastOptions() -> StoreOptions {
    var options = StoreOptions()
    options.durability = .noSync
    return options
}
