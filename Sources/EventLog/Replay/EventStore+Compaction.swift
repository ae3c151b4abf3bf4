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
        try StoreDirectory.checkExists(path, operation: "compact")
        var rewrite = RecordRewrite()
        var head: Position = 0
        var removed: [String] = []
        let report: CompactionReport
        do {
            report = try Environment.compact(path: path, options: options.environmentOptions, beforeCopy: { environment in
                rewrite = try rewriteRecordsCompact(in: environment, path: path)
            }, beforeSwap: { old, copy in
                let before = try CompactionFingerprint(of: old, path: path)
                let after = try CompactionFingerprint(of: copy, path: path)
                if let difference = before.difference(from: after) {
                    throw EventLogError(.corrupt, operation: "compact",
                                        "the compacted copy differs from the store (\(difference)); the store was left as it was")
                }
                head = before.head.position
                removed = removeAbandonedFiles(in: old.path)
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
        let path = StoreIndex<Views.Index>.path(inStore: store)
        guard FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("data.mdb")) else { return nil }
        var indexOptions = options.environmentOptions
        indexOptions.durability = options.indexDurability
        let report: CompactionReport
        do {
            report = try Environment.compact(path: path, options: indexOptions, beforeSwap: { old, copy in
                let before = try IndexFingerprint(of: old, path: path)
                let after = try IndexFingerprint(of: copy, path: path)
                if let difference = before.difference(from: after) {
                    throw EventLogError(.corrupt, operation: "compact",
                                        "the compacted copy of the index differs from it (\(difference)); the index was left as it was")
                }
            }, progress: progress)
        } catch let error as EnvironmentBusyError {
            throw EventLogError(.storeBusy, operation: "compact", "the log was compacted, the index not: \(error.description)")
        } catch let error as DamagedFileError {
            throw IndexDirectory.damaged(store, error.summary)
        } catch let error as EnvironmentAlreadyOpenError {
            throw EventLogError(.storeBusy, operation: "compact", "\(error); close it before compacting")
        }
        return IndexCompaction(bytesBefore: report.bytesBefore, bytesAfter: report.bytesAfter, bytesZeroed: report.bytesZeroed,
                               removed: report.removedLeftover ? [StoreIndex<Views.Index>.directoryName + "/" + Environment.compactionCopyName] : [],
                               seconds: report.seconds)
    }

    /// Rebuild scratch environments and partial snapshots under `path`:
    /// called while the store is held alone, when no process can be
    /// writing them. Returns their names, relative to `path`.
    private static func removeAbandonedFiles(in path: String) -> [String] {
        let files = FileManager.default
        var removed: [String] = []
        for name in (try? files.contentsOfDirectory(atPath: path)) ?? [] where name.hasPrefix("replay-scratch-") {
            if (try? files.removeItem(atPath: (path as NSString).appendingPathComponent(name))) != nil { removed.append(name) }
        }
        let snapshots = (path as NSString).appendingPathComponent("snapshots")
        for name in (try? files.contentsOfDirectory(atPath: snapshots)) ?? [] where name.contains(".partial-") {
            if (try? files.removeItem(atPath: (snapshots as NSString).appendingPathComponent(name))) != nil {
                removed.append("snapshots/" + name)
            }
        }
        return removed.sorted()
    }
}

/// What must be equal in a store and its compacted copy: the log's head and
/// last link, the recorded head, and every named database's entries, depth
/// and pages (the copy keeps each B-tree's shape; only free pages go).
struct CompactionFingerprint: Equatable {
    var head: RecordedHead
    var recordedHead: RecordedHead?
    var databases: [String: DatabaseStatistics]

    init(of environment: Environment, path: String) throws {
        let databases: LogDatabases
        do {
            databases = try environment.openDatabases { try LogDatabases(openingIn: $0) }
        } catch LMDBError.notFound {
            throw EventLogError(.storeMissing, operation: "compact", "\(path) holds an LMDB environment without an event log")
        }
        (head, recordedHead, self.databases) = try environment.read { txn in
            if let format = try databases.format(in: txn), !StoreFormat.readable.contains(format.version) {
                throw EventLogError(.incompatibleFormat, operation: "compact",
                                    "the store at \(path) has format \(format.version); this version reads formats \(StoreFormat.readable.lowerBound) to \(StoreFormat.readable.upperBound)")
            }
            return (try databases.head(in: txn), try databases.recordedHead(in: txn), try DatabaseShapes.of(txn))
        }
    }

    /// What differs, in words; nil when nothing does.
    func difference(from other: CompactionFingerprint) -> String? {
        if head != other.head { return "head \(head.position) against \(other.head.position), or its link" }
        if recordedHead != other.recordedHead { return "the recorded head" }
        return DatabaseShapes.difference(databases, other.databases)
    }
}

/// What must be equal in an index environment and its compacted copy: the
/// applied head and every named database's entries, depth and pages.
struct IndexFingerprint: Equatable {
    var applied: RecordedHead
    var databases: [String: DatabaseStatistics]

    init(of environment: Environment, path: String) throws {
        let indexDatabases: IndexDatabases
        do {
            indexDatabases = try environment.openDatabases { try IndexDatabases(openingIn: $0) }
        } catch LMDBError.notFound {
            throw EventLogError(.corrupt, operation: "compact", "\(path) holds an LMDB environment that is not an index")
        }
        (applied, databases) = try environment.read { txn in
            return (try indexDatabases.applied(in: txn), try DatabaseShapes.of(txn))
        }
    }

    func difference(from other: IndexFingerprint) -> String? {
        if applied != other.applied { return "applied \(applied.position) against \(other.applied.position), or its link" }
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
