import Foundation
import LMDB
#if canImport(Glibc)
import Glibc
#endif

/// What opening a store's directory can meet before the log is read, each
/// reported as what it is: no store, a directory this user may not read,
/// another program's LMDB environment, a damaged data file.
///
/// ```swift
/// try StoreDirectory.checkExists("/srv/events")   // storeMissing, or permissionDenied
/// let environment = try StoreDirectory.open("/srv/events", options: options.environmentOptions)
/// try StoreDirectory.refuseForeign(environment, path: "/srv/events")   // before anything is created in it
/// ```
enum StoreDirectory {
    /// Throws unless `path` holds a `data.mdb` this user can reach:
    /// ``EventLogError/Code/storeMissing`` when there is none,
    /// ``EventLogError/Code/permissionDenied`` when the directory may not
    /// be searched (`stat(2)` says `EACCES`; a missing file is not taken
    /// for a missing store then).
    static func checkExists(_ path: String, operation: String = "open") throws {
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        var info = stat()
        guard stat(dataFile, &info) != 0 else { return }
        let code = errno
        switch code {
        case ENOENT, ENOTDIR:
            throw EventLogError(.storeMissing, operation: operation, "no store at \(path) (no data.mdb there)")
        case EACCES, EPERM:
            throw permissionDenied(path, operation: operation, "stat(\(dataFile)): \(String(cString: strerror(code)))")
        default:
            throw EventLogError(.storeMissing, operation: operation,
                                "cannot reach the store at \(path): stat(\(dataFile)): \(String(cString: strerror(code))) (\(code))")
        }
    }

    /// Opens the store's environment, its errors said in the store's terms.
    static func open(_ path: String, options: EnvironmentOptions, operation: String = "open") throws -> Environment {
        do {
            return try Environment(path: path, options: options)
        } catch let error as EnvironmentBusyError {
            throw EventLogError(.storeBusy, operation: operation, error.description)
        } catch let error as DamagedFileError {
            throw damaged(error, operation: operation)
        } catch let error as LMDBError where error.code == EACCES || error.code == EPERM {
            throw permissionDenied(path, operation: operation, error.description)
        } catch let error as CocoaError where error.code == .fileWriteNoPermission {
            throw permissionDenied(path, operation: operation, "cannot create the directory")
        }
    }

    static func permissionDenied(_ path: String, operation: String, _ detail: String) -> EventLogError {
        EventLogError(.permissionDenied, operation: operation,
                      "permission denied: this user (uid \(getuid())) may not use the store at \(path) (\(detail))")
    }

    /// A damaged data file, as a corrupt store; keys out of order in the
    /// log name the position where the log goes wrong.
    static func damaged(_ error: DamagedFileError, operation: String) -> EventLogError {
        guard error.database == "log", case .keysOutOfOrder(_, let previous, let key, let preceding) = error.problem,
              let previous = position(previous), let key = position(key) else {
            return EventLogError(.corrupt, operation: operation, error.description)
        }
        // preceding < key: `previous` is the stray key; else `key` is.
        let before = preceding.flatMap(position)
        let bad = before.map { $0 < key ? $0 + 1 : previous + 1 } ?? previous + 1
        let keys = (before.map { ["\($0)"] } ?? []) + ["\(previous)", "then \(key)"]
        return EventLogError(.corrupt, operation: operation,
                             "the log is damaged at position \(bad): its keys run \(keys.joined(separator: ", ")) (\(error))", position: bad)
    }

    private static func position(_ key: [UInt8]) -> Position? {
        key.count == 8 ? key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) } : nil
    }

    /// Throws unless `environment` is empty or holds an event log: a
    /// directory with another program's LMDB data is never written to.
    static func refuseForeign(_ environment: Environment, path: String) throws {
        let names = try environment.read { try $0.databaseNames() }
        let present = Set(names.map { Name($0) })
        if !names.isEmpty && !(present.contains("log") && present.contains("meta")) {
            throw foreign(path, databases: names)
        }
    }

    static func foreign(_ path: String, databases: [String]) -> EventLogError {
        let shown = databases.prefix(8).map { "\"\($0)\"" }.joined(separator: ", ") + (databases.count > 8 ? ", …" : "")
        return EventLogError(.storeMissing, operation: "open",
                             "\(path) holds an LMDB environment without an event log (another program's: databases \(shown)); "
                                 + "nothing was written to it. Give the store a directory of its own")
    }
}
