import CLMDB
#if canImport(Glibc)
import Glibc
#endif

/// A typed named database (`MDB_dbi`): keys and values go through
/// ``LMDBCodable``, so a wrong key type does not compile.
///
/// ```swift
/// let positions = try txn.createDatabase("positions", as: String.self, UInt64.self)
/// try positions.put(42, forKey: "order-42", in: txn)
/// let p = try positions.get("order-42", in: txn)   // 42
/// ```
///
/// A handle is a number, valid in every transaction of its environment once
/// the transaction that opened it has committed.
///
/// A database of a read-only environment that holds no database at all (one
/// whose creator was killed before its first commit: an empty store) is
/// *absent*: it reads as empty (every `get` nil, every cursor at its end)
/// and cannot be written (``WriteTransaction/createDatabase(_:as:_:flags:)``).
public struct Database<Key: LMDBCodable, Value: LMDBCodable>: Sendable {
    public let handle: MDB_dbi
    public let name: String?
    /// The database does not exist in its read-only environment: it reads as empty.
    public let isAbsent: Bool

    public init(handle: MDB_dbi, name: String?) {
        self.init(handle: handle, name: name, isAbsent: false)
    }

    init(handle: MDB_dbi, name: String?, isAbsent: Bool) {
        self.handle = handle
        self.name = name
        self.isAbsent = isAbsent
    }

    /// A database that `environment` (read-only) does not hold.
    static func absent(_ name: String?) -> Database { Database(handle: 0, name: name, isAbsent: true) }

    var label: String { name ?? "main" }

    /// A write to an absent database (never reached: its environment is read-only).
    private func refuseAbsent(_ call: String) throws {
        if isAbsent { throw LMDBError(code: EACCES, call: "\(call)(\(label))", hint: "the database does not exist in this read-only environment") }
    }

    /// The value stored under `key` (`mdb_get`), or nil.
    public func get(_ key: Key, in txn: ReadTransaction) throws -> Value? {
        try withValue(forKey: key, in: txn) { try Value.decode(lmdbBytes: $0) }
    }

    /// Calls `body` with the stored bytes of `key` (`mdb_get`), without
    /// copying them; nil when the key is absent. The bytes live until the
    /// transaction ends.
    public func withValue<R>(forKey key: Key, in txn: ReadTransaction, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        if isAbsent { return nil }
        return try key.withEncodedBytes { keyBytes in
            var k = MDB_val(keyBytes)
            var v = MDB_val()
            let rc = mdb_get(txn.pointer, handle, &k, &v)
            if rc == MDB_NOTFOUND { return nil }
            try check(rc, "mdb_get(\(label))")
            return try body(v.buffer)
        }
    }

    /// Whether `key` is present.
    public func contains(_ key: Key, in txn: ReadTransaction) throws -> Bool {
        try withValue(forKey: key, in: txn) { _ in true } ?? false
    }

    /// Stores `value` under `key` (`mdb_put`).
    public func put(_ value: Value, forKey key: Key, flags: PutFlags = [], in txn: WriteTransaction) throws {
        try refuseAbsent("mdb_put")
        try key.withEncodedBytes { keyBytes in
            try value.withEncodedBytes { valueBytes in
                try Database.putRaw(keyBytes, valueBytes, handle: handle, label: label, flags: flags, in: txn)
            }
        }
    }

    /// Reserves `count` bytes under `key` (`mdb_put` with `MDB_RESERVE`) and
    /// lets `fill` write them in place, saving a copy for large values.
    public func put(reserving count: Int, forKey key: Key, flags: PutFlags = [], in txn: WriteTransaction,
                    _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try refuseAbsent("mdb_put")
        try key.withEncodedBytes { keyBytes in
            var k = MDB_val(keyBytes)
            var v = MDB_val(mv_size: count, mv_data: nil)
            try check(mdb_put(txn.pointer, handle, &k, &v, flags.rawValue | UInt32(MDB_RESERVE)), "mdb_put(\(label), reserve)")
            try fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
        }
    }

    /// Stores bytes as they are (`mdb_put`), bypassing the codecs: for
    /// copying entries between databases without decoding them.
    public func putBytes(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, flags: PutFlags = [],
                         in txn: WriteTransaction) throws {
        try refuseAbsent("mdb_put")
        try Database.putRaw(key, value, handle: handle, label: label, flags: flags, in: txn)
    }

    static func putRaw(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, handle: MDB_dbi, label: String,
                       flags: PutFlags, in txn: WriteTransaction) throws {
        var k = MDB_val(key)
        var v = MDB_val(value)
        try check(mdb_put(txn.pointer, handle, &k, &v, flags.rawValue), "mdb_put(\(label))")
    }

    /// Removes `key` and its values (`mdb_del`); false when it was absent.
    @discardableResult
    public func delete(_ key: Key, in txn: WriteTransaction) throws -> Bool {
        try refuseAbsent("mdb_del")
        return try key.withEncodedBytes { keyBytes in
            var k = MDB_val(keyBytes)
            let rc = mdb_del(txn.pointer, handle, &k, nil)
            if rc == MDB_NOTFOUND { return false }
            try check(rc, "mdb_del(\(label))")
            return true
        }
    }

    /// Removes one key/value pair of a `duplicateSort` database (`mdb_del`
    /// with data); false when it was absent.
    @discardableResult
    public func delete(_ key: Key, value: Value, in txn: WriteTransaction) throws -> Bool {
        try refuseAbsent("mdb_del")
        return try key.withEncodedBytes { keyBytes in
            try value.withEncodedBytes { valueBytes in
                var k = MDB_val(keyBytes)
                var v = MDB_val(valueBytes)
                let rc = mdb_del(txn.pointer, handle, &k, &v)
                if rc == MDB_NOTFOUND { return false }
                try check(rc, "mdb_del(\(label))")
                return true
            }
        }
    }

    /// Empties the database, keeping it (`mdb_drop` with 0).
    public func removeAll(in txn: WriteTransaction) throws {
        try refuseAbsent("mdb_drop")
        try check(mdb_drop(txn.pointer, handle, 0), "mdb_drop(\(label))")
    }

    /// Deletes the database from the environment (`mdb_drop` with 1): its
    /// entries and its name go, and this handle is closed.
    public func drop(in txn: WriteTransaction) throws {
        try refuseAbsent("mdb_drop")
        try check(mdb_drop(txn.pointer, handle, 1), "mdb_drop(\(label), delete)")
    }

    /// A cursor over the database (`mdb_cursor_open`), closed when it is released.
    public func cursor(in txn: ReadTransaction) throws -> Cursor<Key, Value> {
        try Cursor(database: self, transaction: txn)
    }

    /// Entry count and page use (`mdb_stat`).
    public func statistics(in txn: ReadTransaction) throws -> DatabaseStatistics {
        var stat = MDB_stat()
        if isAbsent { return DatabaseStatistics(stat) }
        try check(mdb_stat(txn.pointer, handle, &stat), "mdb_stat(\(label))")
        return DatabaseStatistics(stat)
    }

    /// The same database seen with other key and value types.
    public func reinterpreted<K2, V2>(as key: K2.Type = K2.self, _ value: V2.Type = V2.self) -> Database<K2, V2> {
        Database<K2, V2>(handle: handle, name: name, isAbsent: isAbsent)
    }
}

/// What `mdb_stat` reports of one database.
public struct DatabaseStatistics: Sendable, Equatable {
    public var entries: Int
    public var depth: Int
    public var branchPages: Int
    public var leafPages: Int
    public var overflowPages: Int
    public var pageSize: Int
    /// Bytes of the pages the database occupies.
    public var bytes: Int { (branchPages + leafPages + overflowPages) * pageSize }

    init(_ stat: MDB_stat) {
        entries = stat.ms_entries
        depth = Int(stat.ms_depth)
        branchPages = stat.ms_branch_pages
        leafPages = stat.ms_leaf_pages
        overflowPages = stat.ms_overflow_pages
        pageSize = Int(stat.ms_psize)
    }
}

extension MDB_val {
    init(_ buffer: UnsafeRawBufferPointer) {
        self.init(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
    }

    var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: mv_data, count: mv_size) }
}
