import Foundation
import LMDB
#if canImport(Glibc)
import Glibc
#endif

/// What opening a store's index environment (`<store>/index`) can meet,
/// each said as what it is and with the index's own remedy: the index is
/// derived from the log, so a damaged one is rebuilt, never restored.
///
/// - `index` a file, or a directory this user may not read: an error
///   naming it (never "no index yet", never a `CocoaError`);
/// - a damaged or cut-short `index/data.mdb`: an error naming the file and
///   the damage, saying the log is untouched and how to rebuild the index;
/// - another program's LMDB environment in `index/`: refused before
///   anything is written to it.
///
/// ```swift
/// guard try IndexDirectory.exists(atStore: "/srv/events") else { return nil }   // throws for a file or EACCES
/// let environment = try IndexDirectory.open(atStore: "/srv/events", options: options)
/// try IndexDirectory.refuseForeign(environment)
/// ```
enum IndexDirectory {
    /// `<store>/index`.
    static func path(inStore store: String) -> String {
        (store as NSString).appendingPathComponent("index")
    }

    /// Whether `<store>/index/data.mdb` exists; throws when `index` is not
    /// a directory, or may not be searched.
    static func exists(atStore store: String) throws -> Bool {
        let path = path(inStore: store)
        var info = stat()
        if stat(path, &info) != 0 {
            let code = errno
            if code == ENOENT { return false }
            throw unreachable(store, "stat(\(path)): \(String(cString: strerror(code))) (\(code))", code: code)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw notADirectory(store) }
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        if stat(dataFile, &info) != 0 {
            let code = errno
            if code == ENOENT { return false }
            throw unreachable(store, "stat(\(dataFile)): \(String(cString: strerror(code))) (\(code))", code: code)
        }
        return true
    }

    /// Opens (for writing: creating) the index environment, its failures
    /// said in the index's terms.
    static func open(atStore store: String, options: EnvironmentOptions) throws -> Environment {
        if !options.readOnly { _ = try exists(atStore: store) }
        do {
            return try Environment(path: path(inStore: store), options: options)
        } catch let error as EnvironmentBusyError {
            throw EventLogError(.storeBusy, operation: "open", error.description)
        } catch let error as DamagedFileError {
            throw damaged(store, error.summary)
        } catch let error as LMDBError where error.code == EACCES || error.code == EPERM {
            throw unreachable(store, error.description, code: error.code)
        } catch let error as CocoaError where error.code == .fileWriteNoPermission {
            throw unreachable(store, "cannot create the directory \(path(inStore: store))", code: EACCES)
        }
    }

    /// Throws unless `environment` is empty or holds an index (its `meta`
    /// database, with the format): another program's environment in
    /// `index/` is never written to.
    static func refuseForeign(_ environment: Environment, store: String) throws {
        let names = try environment.read { try $0.databaseNames() }
        guard !names.isEmpty else { return }
        let isIndex = try names.contains { Name.equal($0, "meta") } && environment.read { txn in
            let meta: Database<String, [UInt8]> = try txn.openDatabase("meta")
            return try meta.get("format", in: txn) != nil
        }
        guard !isIndex else { return }
        let shown = names.prefix(8).map { "\"\($0)\"" }.joined(separator: ", ") + (names.count > 8 ? ", …" : "")
        throw EventLogError(.corrupt, operation: "open",
                            "\(path(inStore: store)) holds an LMDB environment that is not this store's index (another program's: databases \(shown)); "
                                + "nothing was written to it. Move it away: the store keeps its keyword index there, and rebuilds it from the log")
    }

    /// The remedy for an index that cannot be used: it is derived from the log.
    static func remedy(_ store: String) -> String {
        "The log is not affected, and the index is derived from it: with no process using the store, remove \(path(inStore: store)) "
            + "and open the store for writing (`eventlog replay --store \(store)`, or a service) to rebuild it"
    }

    static func damaged(_ store: String, _ summary: String) -> EventLogError {
        EventLogError(.corrupt, operation: "open", "the store's index is damaged: \(summary). \(remedy(store))")
    }

    static func notADirectory(_ store: String) -> EventLogError {
        EventLogError(.corrupt, operation: "open",
                      "\(path(inStore: store)) is not a directory: the store keeps its keyword index there (index/data.mdb). "
                          + "Move it away; the index is derived from the log and is rebuilt when the store is opened for writing")
    }

    static func unreachable(_ store: String, _ detail: String, code: Int32) -> EventLogError {
        if code == EACCES || code == EPERM {
            return EventLogError(.permissionDenied, operation: "open",
                                 "permission denied: this user (uid \(getuid())) may not use the store's index at \(path(inStore: store)) (\(detail))")
        }
        if code == ENOTDIR { return notADirectory(store) }
        return EventLogError(.corrupt, operation: "open", "cannot reach the store's index at \(path(inStore: store)): \(detail)")
    }
}
