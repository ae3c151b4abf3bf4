import CLMDB

/// An error returned by an LMDB call, with the name of the call that failed.
///
/// Every LMDB return code goes through ``check(_:_:)``, so a failure always
/// says which C function returned it and what LMDB's `mdb_strerror` says:
///
/// Match a code by name in `catch`, as with GRDB's `DatabaseError` or
/// swift-system's `Errno`:
///
/// ```swift
/// do { try env.write { txn in try db.put(value, forKey: key, in: txn) } }
/// catch LMDBError.readersFull { … }               // any LMDBError with that code
/// catch let error as LMDBError { print(error) }   // "mdb_put(log): MDB_MAP_FULL: … (-30792)"
/// ```
public struct LMDBError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The LMDB or `errno` return code.
    public var code: Int32
    /// The C function that returned it, e.g. `"mdb_put"`.
    public var call: String
    /// What the caller can do about it, when this layer knows more than
    /// LMDB's message says (e.g. which limit was reached and how to raise it).
    public var hint: String?

    public init(code: Int32, call: String, hint: String? = nil) {
        self.code = code
        self.call = call
        self.hint = hint
    }

    /// LMDB's own message for the code (`mdb_strerror`).
    public var message: String { String(cString: mdb_strerror(code)) }

    public var description: String {
        "\(call): \(message) (\(code))" + (hint.map { ": \($0)" } ?? "")
    }

    public static func == (lhs: LMDBError, rhs: LMDBError) -> Bool { lhs.code == rhs.code }

    /// Whether `error` is an ``LMDBError`` with this code, whatever call
    /// returned it: what lets `catch LMDBError.mapFull` work.
    public static func ~= (pattern: LMDBError, error: any Error) -> Bool {
        (error as? LMDBError)?.code == pattern.code
    }

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
