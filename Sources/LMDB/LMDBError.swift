import CLMDB

/// An error returned by an LMDB call, with the name of the call that failed.
///
/// Every LMDB return code goes through ``check(_:_:)``, so a failure always
/// says which C function returned it and what LMDB's `mdb_strerror` says:
///
/// ```swift
/// do { try env.write { txn in try db.put(key, value, in: txn) } }
/// catch let error as LMDBError where error.code == LMDBError.mapFull.code { … }
/// ```
public struct LMDBError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The LMDB or `errno` return code.
    public var code: Int32
    /// The C function that returned it, e.g. `"mdb_put"`.
    public var call: String

    public init(code: Int32, call: String) {
        self.code = code
        self.call = call
    }

    /// LMDB's own message for the code (`mdb_strerror`).
    public var message: String { String(cString: mdb_strerror(code)) }

    public var description: String { "\(call): \(message) (\(code))" }

    public static func == (lhs: LMDBError, rhs: LMDBError) -> Bool { lhs.code == rhs.code }

    // The codes callers match on, named as in lmdb.h.
    public static let notFound = LMDBError(code: MDB_NOTFOUND, call: "")
    public static let keyExists = LMDBError(code: MDB_KEYEXIST, call: "")
    public static let mapFull = LMDBError(code: MDB_MAP_FULL, call: "")
    public static let mapResized = LMDBError(code: MDB_MAP_RESIZED, call: "")
    public static let readersFull = LMDBError(code: MDB_READERS_FULL, call: "")
    public static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE, call: "")
    public static let incompatible = LMDBError(code: MDB_INCOMPATIBLE, call: "")
    public static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH, call: "")
    public static let invalid = LMDBError(code: MDB_INVALID, call: "")
    public static let corrupted = LMDBError(code: MDB_CORRUPTED, call: "")
}

/// Turns an LMDB return code into a thrown ``LMDBError`` naming `call`.
/// The one place where C return codes become Swift errors.
@inline(__always)
func check(_ code: Int32, _ call: @autoclosure () -> String) throws(LMDBError) {
    if code != 0 { throw LMDBError(code: code, call: call()) }
}
