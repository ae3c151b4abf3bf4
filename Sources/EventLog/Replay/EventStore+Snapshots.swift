import Foundation
import LMDB
#if canImport(Glibc)
import Glibc
#endif

extension EventStore {
    /// `<store>/snapshots`.
    public var snapshotDirectory: String { Self.snapshotDirectory(ofStore: environment.path) }

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
        // A failure removes what this call made: the views' snapshot when the index's fails, the directory.
        let madeDirectory = try makeSnapshotDirectory()
        var made: [String] = []
        do {
            return try createSnapshot(made: &made)
        } catch {
            for path in made { unlink(path) }
            if madeDirectory { rmdir(snapshotDirectory) }
            throw error
        }
    }

    private func createSnapshot(made: inout [String]) throws -> SnapshotInfo {
        let projections = views.all
        let existed = Set((try? FileManager.default.contentsOfDirectory(atPath: snapshotDirectory)) ?? [])
        let info = try environment.read { txn in
            let head = try databases.head(in: txn)
            for projection in projections {
                let checkpoint = try databases.checkpoint(of: projection.name, in: txn)
                guard checkpoint == Checkpoint(position: head.position, version: projection.version) else {
                    throw EventLogError(.snapshot, operation: "snapshot create",
                                        "projection \(projection.name) is at \(checkpoint?.position ?? 0), not the head \(head.position); reopen the store to catch it up")
                }
            }
            return try writeSnapshot(projections, at: head, to: snapshotPath(head.position), in: txn)
        }
        if !existed.contains(StorePath.lastComponent(info.path)) { made.append(info.path) }
        try removeIfForgotten(info)
        if let index {
            var indexSnapshot: SnapshotInfo?
            try index.environment.read { txn in
                let applied = try index.databases.applied(in: txn)
                guard applied.position > 0 else { return }
                for projection in index.views.all {
                    let checkpoint = try index.databases.checkpoints.checkpoint(of: projection.name, in: txn)
                    guard checkpoint == Checkpoint(position: applied.position, version: projection.version) else { return }
                }
                // An index that has not yet applied a forget holds the forgotten user's
                // documents: no snapshot of it (it would outlive the forget).
                if let by = try environment.read({ try databases.redaction(after: applied.position, in: $0) }) {
                    options.logger.notice("""
                        no snapshot of the index: it has applied the log through \(applied.position), not yet the forget at \(by), \
                        and would keep what that forget erased
                        """)
                    return
                }
                indexSnapshot = try writeSnapshot(index.views.all, at: applied, to: snapshotPath(applied.position, .index), in: txn)
            }
            if let indexSnapshot { try removeIfForgotten(indexSnapshot) }
        }
        return info
    }

    /// `snapshots/`, created (0700, owned as the store's directory) when
    /// missing; true when it was.
    @discardableResult
    func makeSnapshotDirectory() throws -> Bool {
        guard mkdir(snapshotDirectory, 0o700) == 0 else {
            let code = errno
            if code == EEXIST { return false }
            throw EventLogError(.snapshot, operation: "snapshot create",
                                "cannot create \(snapshotDirectory): \(String(cString: strerror(code))) (\(code))")
        }
        StoreOwner.adopt(snapshotDirectory)
        return true
    }

    /// Writes the databases of `projections` as `txn` sees them, stamped
    /// with `head` (the position and link of the log they were built
    /// through), to `final` (through a partial file renamed when whole).
    @discardableResult
    private func writeSnapshot(_ projections: [any Projection], at head: RecordedHead, to final: String,
                               in txn: ReadTransaction) throws -> SnapshotInfo {
        if let existing = try? snapshotInfo(at: final), existing.link == head.link { return existing }
        let temporary = final + ".partial-\(getpid())"
        defer { unlink(temporary) }
        let writer = try SnapshotFile.Writer(path: temporary)
        try writer.write(SnapshotFile.magic)
        try writer.write(head.position)
        try head.link.bytes.withUnsafeBytes { try writer.write($0) }
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
        guard rename(temporary, final) == 0 else {
            throw SnapshotFile.failure(LMDBError(code: errno, call: "rename(\(temporary), \(final))"), path: final)
        }
        StoreOwner.adopt(final)
        return try snapshotInfo(at: final)
    }

    /// A forget that committed after the snapshot's transaction began
    /// removed the snapshots it reaches (in its transaction and after it),
    /// but not one renamed since: looked for again, in a transaction begun
    /// after the rename, so that one of the two sees the other. Called once
    /// the snapshot's own read transaction has ended: a read nested in it
    /// would wait forever when the map grew meanwhile (adopting the new
    /// size waits for every transaction of the environment to end).
    private func removeIfForgotten(_ snapshot: SnapshotInfo) throws {
        guard let by = try environment.read({ try databases.redaction(after: snapshot.position, in: $0) }) else { return }
        unlink(snapshot.path)
        throw EventLogError(.snapshot, operation: "snapshot create",
                            "a forget (the redaction record at \(by)) committed while the snapshot at \(snapshot.position) was written: "
                                + "it held what that forget erased, and was removed; take the snapshot again")
    }

    /// The snapshots of the views on disk, oldest first. Files that are not
    /// readable snapshots are left out.
    public func snapshots() throws -> [SnapshotInfo] {
        try snapshots(of: .views)
    }

    /// The snapshots of `kind` on disk, oldest first.
    public func snapshots(of kind: SnapshotKind) throws -> [SnapshotInfo] {
        try Self.snapshots(of: kind, in: snapshotDirectory)
    }

    static func snapshots(of kind: SnapshotKind, in directory: String) throws -> [SnapshotInfo] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(kind.suffix) && (kind == .index || !$0.hasSuffix(SnapshotKind.index.suffix)) }.sorted()
            .compactMap { try? snapshotInfo(at: (directory as NSString).appendingPathComponent($0)) }
    }

    static func snapshotDirectory(ofStore store: String) -> String { (store as NSString).appendingPathComponent("snapshots") }

    /// Deletes the snapshot of `kind` at `position`; false when there is
    /// none. (Only the file goes: a store opened read-only may delete one.)
    @discardableResult
    public func deleteSnapshot(at position: Position, _ kind: SnapshotKind = .views) throws -> Bool {
        let path = snapshotPath(position, kind)
        guard unlink(path) == 0 else {
            let code = errno
            if code == ENOENT { return false }
            throw EventLogError(.snapshot, operation: "snapshot delete", "unlink(\(path)): \(String(cString: strerror(code))) (\(code))")
        }
        return true
    }

    /// The snapshot's history: the position and link of the log it was
    /// built through, and whether this log vouches for it.
    public func history(of snapshot: SnapshotInfo) throws -> DerivedHistory {
        try environment.read { try DerivedHistory.of(position: snapshot.position, link: snapshot.link, log: databases, in: $0) }
    }

    /// The snapshots of `kind` stamped with exactly `projections` (names
    /// and versions) at or before `end`, newest first, that this log
    /// vouches for; the others are ignored, never half-used (a snapshot of
    /// another history, one ahead of the log, or one that records no link,
    /// said on the log).
    func usableSnapshots(of kind: SnapshotKind, projections: [any Projection], atOrBefore end: Position) throws -> [SnapshotInfo] {
        let wanted = Set(projections.map { SnapshotInfo.ProjectionStamp(name: $0.name, version: $0.version) })
        let candidates = try snapshots(of: kind).reversed().filter { $0.position <= end && Set($0.projections) == wanted }
        return try environment.read { txn in
            try candidates.filter { snapshot in
                let history = try DerivedHistory.of(position: snapshot.position, link: snapshot.link, log: databases, in: txn)
                if !history.isThisLog {
                    options.logger.warning("snapshot ignored: the log does not vouch for it", metadata: [
                        "snapshot": "\(snapshot.path)", "history": "\(history)"])
                }
                return history.isThisLog
            }
        }
    }

    /// Throws when a snapshot lies past the log's head: the log has lost
    /// records (or the snapshot is another store's), and a writer would
    /// write over positions it has seen.
    static func refuseSnapshotsAheadOfLog(_ environment: Environment, databases: LogDatabases) throws {
        let head = try environment.read { try databases.head(in: $0).position }
        let directory = snapshotDirectory(ofStore: environment.path)
        for snapshot in try snapshots(of: .views, in: directory) + snapshots(of: .index, in: directory) where snapshot.position > head {
            let history = DerivedHistory(position: snapshot.position, link: snapshot.link, standing: .aheadOfLog(head: head))
            if let refusal = history.refusal(of: "the snapshot \(snapshot.path)", store: environment.path,
                                             remedy: "remove it (`eventlog snapshot delete \(snapshot.position)\(snapshot.kind == .index ? " --index" : "")`)") {
                throw refusal
            }
        }
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
        return try usableSnapshots(of: kind, projections: projections, atOrBefore: position).first
    }

    func snapshotPath(_ position: Position, _ kind: SnapshotKind = .views) -> String {
        let digits = String(position)
        return (snapshotDirectory as NSString)
            .appendingPathComponent(String(repeating: "0", count: max(0, 20 - digits.count)) + digits + kind.suffix)
    }

    func snapshotInfo(at path: String) throws -> SnapshotInfo { try Self.snapshotInfo(at: path) }

    static func snapshotInfo(at path: String) throws -> SnapshotInfo {
        let reader = try SnapshotFile.Reader(path: path)
        let header = try reader.readHeader()
        let size = Int(reader.size)
        return SnapshotInfo(position: header.position, path: path,
                            projections: header.projections.map { .init(name: $0.name, version: $0.version) },
                            bytes: size, link: header.link, kind: path.hasSuffix(SnapshotKind.index.suffix) ? .index : .views)
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
