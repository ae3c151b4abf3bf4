import Foundation
import LMDB

extension EventStore {
    /// `<store>/snapshots`.
    public var snapshotDirectory: String { (environment.path as NSString).appendingPathComponent("snapshots") }

    /// Writes every projection's databases, as of the last commit, to a new
    /// snapshot file; and, when the store has an index, the index's, as of
    /// the position it applied through, to another (``SnapshotKind/index``).
    /// Runs in read transactions: writers and the indexer go on meanwhile.
    ///
    /// ```swift
    /// let snapshot = try store.createSnapshot()   // snapshots/00000000000000120000.snapshot
    /// ```
    @discardableResult
    public func createSnapshot() throws -> SnapshotInfo {
        try FileManager.default.createDirectory(atPath: snapshotDirectory, withIntermediateDirectories: true)
        let projections = views.all
        let info = try environment.read { txn in
            let head = try databases.head(in: txn).position
            for projection in projections {
                let checkpoint = try databases.checkpoint(of: projection.name, in: txn)
                guard checkpoint == Checkpoint(position: head, version: projection.version) else {
                    throw EventLogError(.snapshot, operation: "snapshot create",
                                        "projection \(projection.name) is at \(checkpoint?.position ?? 0), not the head \(head); reopen the store to catch it up")
                }
            }
            return try writeSnapshot(projections, at: head, to: snapshotPath(head), in: txn)
        }
        if let index {
            try index.environment.read { txn in
                let applied = try index.databases.applied(in: txn).position
                guard applied > 0 else { return }
                for projection in index.views.all {
                    let checkpoint = try index.databases.checkpoints.checkpoint(of: projection.name, in: txn)
                    guard checkpoint == Checkpoint(position: applied, version: projection.version) else { return }
                }
                try writeSnapshot(index.views.all, at: applied, to: snapshotPath(applied, .index), in: txn)
            }
        }
        return info
    }

    /// Writes the databases of `projections` as `txn` sees them, stamped
    /// with `position`, to `final` (through a partial file renamed when whole).
    @discardableResult
    private func writeSnapshot(_ projections: [any Projection], at position: Position, to final: String,
                               in txn: ReadTransaction) throws -> SnapshotInfo {
        if let existing = try? snapshotInfo(at: final) { return existing }
        let temporary = final + ".partial-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        let writer = try SnapshotFile.Writer(path: temporary)
        try writer.write(SnapshotFile.magic)
        try writer.write(position)
        try writer.write(UInt32(projections.count))
        for projection in projections {
            try writer.write(string: projection.name)
            try writer.write(projection.version)
            try writer.write(UInt32(projection.databaseNames.count))
            for name in projection.databaseNames { try writer.write(string: name) }
        }
        for projection in projections {
            for name in projection.databaseNames {
                let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
                try writer.write(UInt64(try db.statistics(in: txn).entries))
                let cursor = try db.cursor(in: txn)
                var entry = try cursor.firstBytes()
                while let (key, value) = entry {
                    try writer.write(UInt32(key.count))
                    try writer.write(key)
                    try writer.write(UInt32(value.count))
                    try writer.write(value)
                    entry = try cursor.nextBytes()
                }
            }
        }
        try writer.seal()
        try FileManager.default.moveItem(atPath: temporary, toPath: final)
        return try snapshotInfo(at: final)
    }

    /// The snapshots of the views on disk, oldest first. Files that are not
    /// readable snapshots are left out.
    public func snapshots() throws -> [SnapshotInfo] {
        try snapshots(of: .views)
    }

    /// The snapshots of `kind` on disk, oldest first.
    public func snapshots(of kind: SnapshotKind) throws -> [SnapshotInfo] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: snapshotDirectory)) ?? []
        return names.filter { $0.hasSuffix(kind.suffix) && (kind == .index || !$0.hasSuffix(SnapshotKind.index.suffix)) }.sorted()
            .compactMap { try? snapshotInfo(at: (snapshotDirectory as NSString).appendingPathComponent($0)) }
    }

    /// Deletes the snapshot of `kind` at `position`; false when there is none.
    @discardableResult
    public func deleteSnapshot(at position: Position, _ kind: SnapshotKind = .views) throws -> Bool {
        let path = snapshotPath(position, kind)
        guard FileManager.default.fileExists(atPath: path) else { return false }
        try FileManager.default.removeItem(atPath: path)
        return true
    }

    /// Reads a whole snapshot file and checks its digest.
    public func verifySnapshot(_ snapshot: SnapshotInfo) -> Bool {
        do {
            let reader = try SnapshotFile.Reader(path: snapshot.path)
            let header = try reader.readHeader()
            for projection in header.projections {
                for _ in projection.databases {
                    let entries = try reader.read(UInt64.self)
                    for _ in 0..<entries {
                        _ = try reader.read(Int(try reader.read(UInt32.self)))
                        _ = try reader.read(Int(try reader.read(UInt32.self)))
                    }
                }
            }
            return try reader.checkDigest()
        } catch {
            return false
        }
    }

    /// The newest snapshot at or before `position` stamped with exactly this
    /// store's projections and versions; others are ignored, never half-used.
    func newestUsableSnapshot(of kind: SnapshotKind = .views, atOrBefore position: Position) throws -> SnapshotInfo? {
        let projections = kind == .views ? views.all : index?.views.all ?? []
        let wanted = Set(projections.map { SnapshotInfo.ProjectionStamp(name: $0.name, version: $0.version) })
        return try snapshots(of: kind).last { $0.position <= position && Set($0.projections) == wanted }
    }

    func snapshotPath(_ position: Position, _ kind: SnapshotKind = .views) -> String {
        let digits = String(position)
        return (snapshotDirectory as NSString)
            .appendingPathComponent(String(repeating: "0", count: max(0, 20 - digits.count)) + digits + kind.suffix)
    }

    private func snapshotInfo(at path: String) throws -> SnapshotInfo {
        let header = try SnapshotFile.Reader(path: path).readHeader()
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        return SnapshotInfo(position: header.position, path: path,
                            projections: header.projections.map { .init(name: $0.name, version: $0.version) },
                            bytes: size)
    }

    /// True while an automatic snapshot is being written.
    public var isSnapshotting: Bool { snapshotInProgress.isRunning }

    /// After a commit that crossed a multiple of the policy's interval: a
    /// snapshot on a background thread (one at a time), then old ones pruned.
    func snapshotIfDue(appended positions: ClosedRange<Position>?) {
        guard let policy = options.snapshotPolicy, let positions,
              (positions.lowerBound - 1) / policy.every != positions.upperBound / policy.every,
              snapshotInProgress.begin() else { return }
        // Counted as a write, so that closing the store waits for it.
        guard (try? writes.enter()) != nil else {
            snapshotInProgress.end()
            return
        }
        Thread.detachNewThread { [self] in
            defer {
                snapshotInProgress.end()
                writes.leave()
            }
            do {
                try createSnapshot()
                for old in try snapshots().dropLast(policy.keep) { try deleteSnapshot(at: old.position) }
                for old in try snapshots(of: .index).dropLast(policy.keep) { try deleteSnapshot(at: old.position, .index) }
            } catch {
                options.logger.warning("automatic snapshot failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// What a snapshot holds: the views (at the log's head), or the index (at
/// the position it applied through).
public enum SnapshotKind: Sendable {
    case views, index

    /// The file name's ending: `00000000000000120000.snapshot`, `00000000000000118000.index.snapshot`.
    var suffix: String { self == .views ? ".snapshot" : ".index.snapshot" }
}

/// At most one automatic snapshot at a time.
final class SingleFlight: @unchecked Sendable {
    private let lock = NSLock()
    private var running = false

    func begin() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if running { return false }
        running = true
        return true
    }

    var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return running
    }

    func end() {
        lock.lock()
        running = false
        lock.unlock()
    }
}
