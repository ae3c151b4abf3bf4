import Foundation
import LMDB

/// The steps and progress of a compaction (see `LMDB.CompactionStep`),
/// named here so that users of the engine need not import the LMDB layer.
public typealias CompactionStep = LMDB.CompactionStep
public typealias CompactionProgress = LMDB.CompactionProgress

extension EventStore {
    /// Rewrites the store's LMDB file so that it holds the data in use and
    /// nothing else, and swaps it in atomically: what LMDB's freed pages
    /// kept of overwritten and deleted entries (the payloads a
    /// `forgetUser` redacted, the views it dropped) is gone from the file.
    ///
    /// ```swift
    /// let result = try EventStore<Views>.compact(path: "/var/lib/app/events")
    /// print(result.bytesBefore, result.bytesAfter)   // 412_090_368 301_342_720
    /// ```
    ///
    /// The store must be closed in every process, this one included,
    /// readers too: otherwise it throws ``EventLogError/Code/storeBusy``
    /// (naming the process when the kernel says), and while it runs, opening
    /// the store throws the same. `Environment.compact(path:options:beforeSwap:progress:)`
    /// says why, and what a crash at any point leaves (the old file or the
    /// new one, whole). Before the swap, the copy must hold the same head,
    /// last link and recorded head as the old file, and every database the
    /// same entries and pages; otherwise the old file stays and it throws
    /// ``EventLogError/Code/corrupt``.
    ///
    /// While it holds the store alone, it also removes what killed
    /// processes left under the directory: rebuild scratch environments
    /// (`replay-scratch-*`) and partial snapshot files (`*.partial-*`),
    /// which may hold views built from payloads redacted since.
    ///
    /// It needs free space for the copy (about the data in use) in the
    /// store's filesystem.
    @discardableResult
    public static func compact(path: String, options: StoreOptions = StoreOptions(),
                               progress: (@Sendable (CompactionProgress) -> Void)? = nil) throws -> StoreCompaction {
        let directory = EnvironmentDirectory.log(path)
        guard try directory.holdsData(operation: "compact") else { throw directory.missing(operation: "compact") }
        try directory.refuseForeignWriter(operation: "compact")
        // No byte of a forgotten user may stay in the index's file either: it must have applied every forget.
        try bringIndexPastForgets(path: path, options: options)
        var rewrite = RecordRewrite()
        var head: Position = 0
        var removed: [String] = []
        let report: CompactionReport
        do {
            report = try Environment.compact(path: path, options: options.environmentOptions, beforeCopy: { environment in
                rewrite = try rewriteRecordsCompact(in: environment, path: path)
            }, beforeSwap: { old, copy in
                let before = try CompactionFingerprint(of: old, directory)
                let after = try CompactionFingerprint(of: copy, directory)
                if let difference = before.difference(from: after) {
                    throw EventLogError(.corrupt, operation: "compact",
                                        "the compacted copy differs from the store (\(difference)); the store was left as it was")
                }
                head = before.head.position
                let databases = try old.openDatabases { try LogDatabases(openingIn: $0) }
                let redacted = try old.read { try databases.redactedRanges(in: $0) }
                removed = removeAbandonedFiles(in: old.path, redacted: redacted)
            }, progress: progress)
        } catch let error as EnvironmentBusyError {
            throw EventLogError(.storeBusy, operation: "compact", error.description)
        } catch let error as EnvironmentAlreadyOpenError {
            throw EventLogError(.storeBusy, operation: "compact", "\(error); close it before compacting")
        }
        var result = StoreCompaction(path: report.path, head: head, bytesBefore: report.bytesBefore, bytesAfter: report.bytesAfter,
                                     bytesZeroed: report.bytesZeroed,
                                     removed: (report.removedLeftover ? [Environment.compactionCopyName] : []) + removed,
                                     seconds: report.seconds)
        result.records = rewrite
        result.index = try compactIndex(ofStore: report.path, options: options, progress: progress)
        if let index = result.index {
            result.removed += index.removed
            result.seconds += index.seconds
        }
        return result
    }

    /// The index environment's part of ``compact(path:options:progress:)``:
    /// the same compaction of `index/data.mdb`, checked the same way (its
    /// applied head and every database's entries and pages). Nil when the
    /// store has no index environment.
    private static func compactIndex(ofStore store: String, options: StoreOptions,
                                     progress: (@Sendable (CompactionProgress) -> Void)?) throws -> IndexCompaction? {
        let directory = EnvironmentDirectory.index(store)
        guard FileManager.default.fileExists(atPath: directory.dataFile) else { return nil }
        var indexOptions = options.environmentOptions
        indexOptions.durability = options.indexDurability
        let report: CompactionReport
        do {
            report = try Environment.compact(path: directory.path, options: indexOptions, beforeSwap: { old, copy in
                let before = try CompactionFingerprint(of: old, directory)
                let after = try CompactionFingerprint(of: copy, directory)
                if let difference = before.difference(from: after) {
                    throw EventLogError(.corrupt, operation: "compact",
                                        "the compacted copy of the index differs from it (\(difference)); the index was left as it was")
                }
            }, progress: progress)
        } catch let error as EnvironmentBusyError {
            throw EventLogError(.storeBusy, operation: "compact", "the log was compacted, the index not: \(error.description)")
        } catch let error as DamagedFileError {
            throw directory.damaged(error, operation: "compact")
        } catch let error as EnvironmentAlreadyOpenError {
            throw EventLogError(.storeBusy, operation: "compact", "\(error); close it before compacting")
        }
        return IndexCompaction(bytesBefore: report.bytesBefore, bytesAfter: report.bytesAfter, bytesZeroed: report.bytesZeroed,
                               removed: report.removedLeftover ? [StoreIndex<Views.Index>.directoryName + "/" + Environment.compactionCopyName] : [],
                               seconds: report.seconds)
    }

    /// Rebuild scratch environments and partial snapshots under `path`,
    /// and every snapshot (the views' or the index's) whose position lies
    /// in a range a later forget redacted (`redacted`: first position, the
    /// redaction record's): one written while that forget committed, by a
    /// process killed before it could remove it, holds what the forget
    /// erased. Called while the store is held alone, when no process can be
    /// writing them. Returns their names, relative to `path`.
    private static func removeAbandonedFiles(in path: String, redacted: [(first: Position, by: Position)]) -> [String] {
        let files = FileManager.default
        var removed: [String] = []
        for name in (try? files.contentsOfDirectory(atPath: path)) ?? [] where name.hasPrefix("replay-scratch-") {
            if (try? files.removeItem(atPath: (path as NSString).appendingPathComponent(name))) != nil { removed.append(name) }
        }
        let snapshots = (path as NSString).appendingPathComponent("snapshots")
        for name in (try? files.contentsOfDirectory(atPath: snapshots)) ?? [] {
            let position = UInt64(name.prefix { $0.isASCII && $0.isNumber })
            let erased = position.map { p in redacted.contains { $0.first <= p && p < $0.by } } ?? false
            guard name.contains(".partial-") || (name.contains(".snapshot") && erased) else { continue }
            if unlink((snapshots as NSString).appendingPathComponent(name)) == 0 { removed.append("snapshots/" + name) }
        }
        return removed.sorted()
    }

    /// Before the files are rewritten: an index that has not applied every
    /// forget in the log still holds what they erased, and its compacted
    /// file would too. It is brought there (the store opened for writing,
    /// the indexer run to the head in this process), or the compaction is
    /// refused, saying why.
    private static func bringIndexPastForgets(path: String, options: StoreOptions) throws {
        guard Views.hasIndex, try EnvironmentDirectory.index(path).holdsData(operation: "compact") else { return }
        var reading = options
        reading.readOnly = true
        reading.createIfMissing = false
        let (lastForget, applied): (Position?, Position?) = try {
            let store = try EventStore(path: path, options: reading)
            defer { store.close() }
            let last = try store.environment.read { txn in
                try store.databases.redactedRanges(in: txn).map(\.by).filter { $0 <= (try store.databases.head(in: txn).position) }.max()
            }
            return (last, try store.index?.applied())
        }()
        guard let lastForget, (applied ?? 0) < lastForget else { return }
        var writing = options
        writing.readOnly = false
        writing.createIfMissing = false
        writing.indexesInBackground = false
        do {
            let store = try EventStore(path: path, options: writing)
            defer { store.close() }
            try store.catchUpIndex()
            options.logger.notice("compact: the index applied the log through the forget at \(lastForget) first")
        } catch let error as EventLogError {
            throw EventLogError(error.code, operation: "compact",
                                "the index has not applied the forget at position \(lastForget) (it applied the log through \(applied.map(String.init) ?? "an unknown position")), "
                                    + "so its file still holds what that forget erased, and it cannot be brought there: \(error.message). "
                                    + "Nothing was compacted", position: lastForget)
        }
    }
}

/// What must be equal in an environment and its compacted copy: the
/// log's head and last link and its recorded head (the index's: its applied
/// head), and every named database's entries, depth and pages (the copy
/// keeps each B-tree's shape; only free pages go).
struct CompactionFingerprint: Equatable {
    var head: RecordedHead
    var recordedHead: RecordedHead?
    var databases: [String: DatabaseStatistics]
    let role: EnvironmentDirectory.Role

    init(of environment: Environment, _ directory: EnvironmentDirectory) throws {
        role = directory.role
        do {
            switch directory.role {
            case .log:
                let databases = try environment.openDatabases { try LogDatabases(openingIn: $0) }
                (head, recordedHead, self.databases) = try environment.read { txn in
                    try databases.metadata.checkFormat(in: txn, path: directory.path, operation: "compact")
                    return (try databases.head(in: txn), try databases.recordedHead(in: txn), try DatabaseShapes.of(txn))
                }
            case .index:
                let databases = try environment.openDatabases { try IndexDatabases(openingIn: $0) }
                recordedHead = nil
                (head, self.databases) = try environment.read { txn in (try databases.applied(in: txn), try DatabaseShapes.of(txn)) }
            }
        } catch LMDBError.notFound {
            throw directory.role == .log
                ? EventLogError(.storeMissing, operation: "compact", "\(directory.path) holds an LMDB environment without an event log")
                : EventLogError(.corrupt, operation: "compact", "\(directory.path) holds an LMDB environment that is not an index")
        }
    }

    /// What differs, in words; nil when nothing does.
    func difference(from other: CompactionFingerprint) -> String? {
        if head != other.head {
            return "\(role == .log ? "head" : "applied") \(head.position) against \(other.head.position), or its link"
        }
        if recordedHead != other.recordedHead { return "the recorded head" }
        return DatabaseShapes.difference(databases, other.databases)
    }
}

/// Every named database's entries, depth and pages, as one read transaction
/// sees them: what a compacted copy must keep (it keeps each B-tree's shape).
enum DatabaseShapes {
    static func of(_ txn: ReadTransaction) throws -> [String: DatabaseStatistics] {
        var statistics: [String: DatabaseStatistics] = [:]
        for name in try txn.databaseNames() {
            let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
            statistics[name] = try db.statistics(in: txn)
        }
        return statistics
    }

    /// The first database whose shape differs, in words; nil when none does.
    static func difference(_ a: [String: DatabaseStatistics], _ b: [String: DatabaseStatistics]) -> String? {
        for name in Set(a.keys).union(b.keys).sorted() where a[name] != b[name] {
            return "database \(name): \(a[name].map { "\($0.entries) entries" } ?? "missing") against "
                + "\(b[name].map { "\($0.entries) entries" } ?? "missing")"
        }
        return nil
    }
}
