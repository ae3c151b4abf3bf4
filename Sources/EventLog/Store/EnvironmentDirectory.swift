import Foundation
import LMDB
#if canImport(Glibc)
import Glibc
#endif

/// One of a store's two LMDB environments as a directory: the log's (the
/// store's directory itself: `data.mdb`, `lock.mdb`) or the index's
/// (`<store>/index`). What opening one can meet before it is read is said
/// as what it is, in that environment's terms: no store (or no index yet),
/// a directory this user may not read, something that is not a directory,
/// another program's LMDB environment, a damaged data file. The log's
/// damage says to restore it; the index's, that the index is derived from
/// the log and is rebuilt, never restored.
///
/// ```swift
/// let log = EnvironmentDirectory.log("/srv/events")
/// guard try log.holdsData(operation: "open") else { throw log.missing(operation: "open") }
/// let environment = try log.open(options: options.environmentOptions, operation: "open")
/// try log.refuseForeign(environment)   // before anything is created in it
/// ```
struct EnvironmentDirectory: Sendable {
    enum Role: Sendable { case log, index }

    /// The store's directory.
    let store: String
    let role: Role

    static func log(_ store: String) -> EnvironmentDirectory { EnvironmentDirectory(store: store, role: .log) }
    static func index(_ store: String) -> EnvironmentDirectory { EnvironmentDirectory(store: store, role: .index) }

    /// The index environment's directory in a store's directory.
    static let indexName = "index"

    /// The environment's directory: the store's, or `<store>/index`.
    var path: String { role == .log ? store : (store as NSString).appendingPathComponent(Self.indexName) }
    var dataFile: String { (path as NSString).appendingPathComponent("data.mdb") }

    /// What the environment is called in messages.
    private var what: String { role == .log ? "the store" : "the store's index" }

    // MARK: Finding it

    /// Whether the environment's `data.mdb` exists; throws when the
    /// directory may not be searched (`EACCES`: never taken for a missing
    /// store), when `index` is not a directory, or when `stat(2)` fails
    /// otherwise.
    func holdsData(operation: String = "open") throws -> Bool {
        var info = stat()
        if role == .index {
            if stat(path, &info) != 0 {
                let code = errno
                if code == ENOENT { return false }
                throw unreachable("stat(\(path)): \(String(cString: strerror(code))) (\(code))", code: code, operation: operation)
            }
            guard info.st_mode & S_IFMT == S_IFDIR else { throw notADirectory(operation: operation) }
        }
        guard stat(dataFile, &info) != 0 else { return true }
        let code = errno
        if code == ENOENT || (role == .log && code == ENOTDIR) { return false }
        throw unreachable("stat(\(dataFile)): \(String(cString: strerror(code))) (\(code))", code: code, operation: operation)
    }

    /// There is no store here (the log's environment only).
    func missing(operation: String) -> EventLogError {
        EventLogError(.storeMissing, operation: operation, "no store at \(store) (no data.mdb there)")
    }

    /// Throws ``EventLogError/Code/permissionDenied`` when this process
    /// runs as a user other than the store directory's owner (and not as
    /// root, whose new files take the directory's owner): what a writer
    /// creates would belong to that user, and the store's owner could not
    /// use it (``StoreOwner``).
    func refuseForeignWriter(operation: String = "open") throws {
        do {
            try StoreOwner.refuseForeignWriter(store)
        } catch let error as ForeignOwnerError {
            throw EventLogError(.permissionDenied, operation: operation, error.description)
        }
    }

    // MARK: Opening

    /// Opens (for writing: creating) the environment, its failures said in
    /// its own terms.
    func open(options: EnvironmentOptions, operation: String = "open") throws -> Environment {
        if role == .index {
            if !options.readOnly { _ = try holdsData(operation: operation) }
            try refuseTheLogsOwnFiles(operation: operation)
        }
        do {
            return try Environment(path: path, options: options)
        } catch let error as EnvironmentBusyError {
            throw EventLogError(.storeBusy, operation: operation, error.description)
        } catch let error as DamagedFileError {
            throw damaged(error, operation: operation)
        } catch let error as NotARegularFileError {
            throw role == .log ? EventLogError(.corrupt, operation: operation, error.description) : damaged(error.description, operation: operation)
        } catch let error as LMDBError where error.code == EACCES || error.code == EPERM {
            throw unreachable(error.description, code: error.code, operation: operation)
        } catch let error as CocoaError where error.code == .fileWriteNoPermission {
            throw unreachable("cannot create the directory \(path)", code: EACCES, operation: operation)
        }
    }

    /// Throws when the index environment would be the log's own: `index`
    /// a link to the store's directory (`index -> .`), or `index/data.mdb`
    /// or `index/lock.mdb` the log's file under another name (a hard link
    /// or a symbolic link: the same device and inode). Opened, the index's
    /// databases would be written into the log's environment. Checked
    /// before anything is opened.
    private func refuseTheLogsOwnFiles(operation: String) throws {
        let log = EnvironmentDirectory.log(store)
        for (mine, logs, what) in [(path, log.path, "the store's directory"),
                                   (dataFile, log.dataFile, "the log's data.mdb"),
                                   ((path as NSString).appendingPathComponent("lock.mdb"),
                                    (log.path as NSString).appendingPathComponent("lock.mdb"), "the log's lock.mdb")] {
            var a = stat(), b = stat()
            guard stat(mine, &a) == 0, stat(logs, &b) == 0, a.st_dev == b.st_dev, a.st_ino == b.st_ino else { continue }
            throw EventLogError(.corrupt, operation: operation,
                                "\(mine) is \(what) (the same file: a link to it), where the index environment must be a directory of its own: "
                                    + "nothing was opened. \(remedy)")
        }
    }

    /// Throws unless `environment` is empty or holds this role's databases
    /// (the log's `log` and `meta`; the index's `meta`, holding a format):
    /// another program's environment is never written to.
    func refuseForeign(_ environment: Environment, operation: String = "open") throws {
        let names = try environment.read { try $0.databaseNames() }
        guard !names.isEmpty else { return }
        let present = Set(names.map { Name($0) })
        switch role {
        case .log:
            guard !(present.contains("log") && present.contains("meta")) else { return }
        case .index:
            // A store's log environment (another store's, moved here) is no index either.
            let holdsFormat = try present.contains("meta") && !present.contains("log") && environment.read { txn in
                let meta: Database<String, [UInt8]> = try txn.openDatabase("meta")
                return try meta.get("format", in: txn) != nil
            }
            guard !holdsFormat else { return }
        }
        throw foreign(databases: names, operation: operation)
    }

    /// Another program's LMDB environment where this one's belongs.
    func foreign(databases: [String], operation: String = "open") -> EventLogError {
        let shown = databases.prefix(8).map { "\"\($0)\"" }.joined(separator: ", ") + (databases.count > 8 ? ", …" : "")
        switch role {
        case .log:
            return EventLogError(.storeMissing, operation: operation,
                                 "\(path) holds an LMDB environment without an event log (another program's: databases \(shown)); "
                                     + "nothing was written to it. Give the store a directory of its own")
        case .index:
            return EventLogError(.corrupt, operation: operation,
                                 "\(path) holds an LMDB environment that is not this store's index (another program's: databases \(shown)); "
                                     + "nothing was written to it. Move it away: the store keeps its keyword index there, and rebuilds it from the log")
        }
    }

    // MARK: What goes wrong

    /// How to recover the index (the log's own damage says to restore it
    /// from a copy): it is derived from the log.
    var remedy: String {
        "The log is not affected, and the index is derived from it: with no process using the store, remove \(EnvironmentDirectory.index(store).path) "
            + "and open the store for writing (`eventlog replay --store \(store)`, or a service) to rebuild it"
    }

    /// How to rebuild the index from the log, when it may not be used as it
    /// is (another history, ahead of the log): an open for writing would
    /// rebuild one of another history by itself, but refuses one ahead.
    var rebuildRemedy: String {
        "with no process using the store, remove \(EnvironmentDirectory.index(store).path) and run `eventlog replay --store \(store)` "
            + "to rebuild the index from this log"
    }

    /// A damaged data file. The log's, as a corrupt store (keys out of
    /// order in the log name the position where it goes wrong); the
    /// index's, with the index's remedy.
    func damaged(_ error: DamagedFileError, operation: String) -> EventLogError {
        if role == .index { return damaged(error.summary, operation: operation) }
        guard error.database == "log", case .keysOutOfOrder(_, let previous, let key, let preceding) = error.problem,
              let previous = Self.position(previous), let key = Self.position(key) else {
            return EventLogError(.corrupt, operation: operation, error.description)
        }
        // preceding < key: `previous` is the stray key; else `key` is.
        let before = preceding.flatMap(Self.position)
        let bad = before.map { $0 < key ? $0 + 1 : previous + 1 } ?? previous + 1
        let keys = (before.map { ["\($0)"] } ?? []) + ["\(previous)", "then \(key)"]
        return EventLogError(.corrupt, operation: operation,
                             "the log is damaged at position \(bad): its keys run \(keys.joined(separator: ", ")) (\(error))", position: bad)
    }

    /// The index cannot be used, for `summary`'s reason; with its remedy.
    func damaged(_ summary: String, operation: String = "open") -> EventLogError {
        EventLogError(.corrupt, operation: operation, "\(what) is damaged: \(summary). \(remedy)")
    }

    private static func position(_ key: [UInt8]) -> Position? {
        key.count == 8 ? key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) } : nil
    }

    func notADirectory(operation: String = "open") -> EventLogError {
        EventLogError(.corrupt, operation: operation,
                      "\(path) is not a directory: the store keeps its keyword index there (index/data.mdb). "
                          + "Move it away; the index is derived from the log and is rebuilt when the store is opened for writing")
    }

    /// `detail` (a failed call) said as permission denied when `code` is
    /// `EACCES` or `EPERM`, else as the environment out of reach.
    func unreachable(_ detail: String, code: Int32, operation: String = "open") -> EventLogError {
        if code == EACCES || code == EPERM { return permissionDenied(detail, operation: operation) }
        switch role {
        case .log:
            return EventLogError(.storeMissing, operation: operation, "cannot reach the store at \(store): \(detail)")
        case .index:
            if code == ENOTDIR { return notADirectory(operation: operation) }
            return EventLogError(.corrupt, operation: operation, "cannot reach the store's index at \(path): \(detail)")
        }
    }

    func permissionDenied(_ detail: String, operation: String = "open") -> EventLogError {
        EventLogError(.permissionDenied, operation: operation,
                      "permission denied: this user (uid \(getuid())) may not use \(role == .log ? "the store" : "the store's index") at \(path) (\(detail))")
    }
}
