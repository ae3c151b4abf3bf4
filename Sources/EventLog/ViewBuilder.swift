import Foundation
import LMDB

/// Builds a store's views in another environment from its log: from a
/// snapshot or position 1, in transactions of `chunk` events. The target is
/// a scratch environment (rebuild, verification) or a new store (time travel).
final class ViewBuilder<Views: ProjectionSet> {
    let source: EventStore<Views>
    let target: Environment
    let views: Views
    private(set) var position: Position = 0
    private(set) var eventsApplied: UInt64 = 0
    var chunk = 10_000
    let progress: ((ReplayProgress) -> Void)?
    let started = DispatchTime.now().uptimeNanoseconds

    init(source: EventStore<Views>, targetPath: String, durability: Durability,
         progress: ((ReplayProgress) -> Void)?) throws {
        self.source = source
        var options = EnvironmentOptions()
        options.durability = durability
        options.maxDatabases = 128
        target = try Environment(path: targetPath, options: options)
        views = try target.write { try Views(openingIn: $0) }
        self.progress = progress
    }

    var seconds: Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }

    /// Loads `snapshot` into the target's (empty) views. False, with the views
    /// emptied again, when the file is damaged (its digest fails).
    func load(_ snapshot: SnapshotInfo) throws -> Bool {
        do {
            let reader = try SnapshotFile.Reader(path: snapshot.path)
            let header = try reader.readHeader()
            for projection in header.projections {
                for name in projection.databases {
                    let db: Database<[UInt8], [UInt8]> = try target.write { try $0.createDatabase(name) }
                    var remaining = try reader.read(UInt64.self)
                    while remaining > 0 {
                        try target.write { txn in
                            var n = 0
                            while remaining > 0 && n < 50_000 {
                                let key = try reader.read(Int(try reader.read(UInt32.self)))
                                let value = try reader.read(Int(try reader.read(UInt32.self)))
                                try key.withUnsafeBytes { k in
                                    try value.withUnsafeBytes { v in
                                        try db.reinterpreted(as: RawBytes.self, RawBytes.self)
                                            .put(RawBytes(v), forKey: RawBytes(k), flags: .append, in: txn)
                                    }
                                }
                                remaining -= 1
                                n += 1
                            }
                        }
                    }
                }
            }
            guard try reader.checkDigest() else { throw EventLogError(.snapshot, operation: "snapshot load", "digest mismatch") }
            position = header.position
            progress?(ReplayProgress(phase: .snapshot, position: position, end: position, events: 0, seconds: seconds))
            return true
        } catch {
            source.options.logger.warning("snapshot unusable, ignored", metadata: ["snapshot": "\(snapshot.path)", "error": "\(error)"])
            try clear()
            position = 0
            return false
        }
    }

    private func clear() throws {
        try target.write { txn in
            for projection in views.all {
                for name in projection.databaseNames {
                    let db: Database<[UInt8], [UInt8]> = try txn.createDatabase(name)
                    try db.removeAll(in: txn)
                }
            }
        }
    }

    /// Applies the source's log after ``position`` through `end`.
    func apply(through end: Position) throws {
        while position < end {
            try applyChunk(through: end) { body in try source.read(body) }
            progress?(ReplayProgress(phase: .log, position: position, end: end, events: eventsApplied, seconds: seconds))
        }
    }

    /// Applies up to ``chunk`` events, read in a live transaction that
    /// `reading` provides, in one target transaction. ``position`` moves only
    /// once that commits: a transaction retried after the map grew must not
    /// skip events.
    func applyChunk(through end: Position, reading: ((ReadTransaction) throws -> Int) throws -> Int) throws {
        let start = position
        let applied = try target.write { txn in
            try reading { live in
                let writers = try views.all.map { try $0.makeWriter(in: txn) }
                var applied = 0
                try source.forEachRecord(after: start, through: end, in: live) { event in
                    for writer in writers { try writer.apply(event) }
                    applied += 1
                    return applied < chunk
                }
                for writer in writers { try writer.finish() }
                return applied
            }
        }
        position = start + UInt64(applied)
        eventsApplied += UInt64(applied)
    }

    /// Sets every projection's checkpoint in the target to ``position``.
    func writeCheckpoints(_ databases: LogDatabases, in txn: WriteTransaction) throws {
        for projection in views.all {
            try databases.setCheckpoint(Checkpoint(position: position, version: projection.version), of: projection.name, in: txn)
        }
    }
}

/// Borrowed bytes as an LMDB key or value, for copying without a copy.
struct RawBytes: LMDBCodable {
    let bytes: UnsafeRawBufferPointer
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
    func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try body(bytes) }
    static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> RawBytes { RawBytes(bytes) }
}
