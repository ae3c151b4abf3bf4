import CLMDB
#if canImport(Glibc)
import Glibc
#endif

/// A position in a database (`MDB_cursor`), for ordered walks and ranges.
///
/// ```swift
/// let cursor = try db.cursor(in: txn)
/// var entry = try cursor.seek(atOrAfter: "lat")     // first key >= "lat"
/// while let (key, value) = entry, key.hasPrefix("lat") {
///     …
///     entry = try cursor.next()
/// }
/// ```
///
/// Raw variants (`…Bytes`) hand out the stored bytes without decoding; they
/// live until the transaction ends. Closed (`mdb_cursor_close`) on release;
/// it must not outlive its transaction.
public final class Cursor<Key: LMDBCodable, Value: LMDBCodable> {
    public typealias Entry = (key: Key, value: Value)
    public typealias RawEntry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    /// Nil over an absent database (``Database/isAbsent``): every move finds nothing.
    let pointer: OpaquePointer?
    let label: String

    init(database: Database<Key, Value>, transaction: ReadTransaction) throws {
        self.label = database.label
        guard !database.isAbsent else {
            pointer = nil
            return
        }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(transaction.pointer, database.handle, &cursor), "mdb_cursor_open(\(database.label))")
        self.pointer = cursor!
    }

    deinit { if let pointer { mdb_cursor_close(pointer) } }

    /// The cursor's handle; throws over an absent database (a write).
    private func writable() throws -> OpaquePointer {
        guard let pointer else { throw LMDBError(code: EACCES, call: "mdb_cursor_put(\(label))", hint: "the database does not exist in this read-only environment") }
        return pointer
    }

    // MARK: Raw moves (`mdb_cursor_get`)

    func move(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil, value: UnsafeRawBufferPointer? = nil) throws -> RawEntry? {
        guard let pointer else { return nil }
        var k = key.map(MDB_val.init) ?? MDB_val()
        var v = value.map(MDB_val.init) ?? MDB_val()
        let rc = mdb_cursor_get(pointer, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_cursor_get(\(label))")
        return (k.buffer, v.buffer)
    }

    /// `MDB_FIRST`.
    public func firstBytes() throws -> RawEntry? { try move(MDB_FIRST) }
    /// `MDB_LAST`.
    public func lastBytes() throws -> RawEntry? { try move(MDB_LAST) }
    /// `MDB_NEXT`: the next pair (in a `duplicateSort` database, the next value).
    public func nextBytes() throws -> RawEntry? { try move(MDB_NEXT) }
    /// `MDB_PREV`.
    public func previousBytes() throws -> RawEntry? { try move(MDB_PREV) }
    /// `MDB_GET_CURRENT`.
    public func currentBytes() throws -> RawEntry? { try move(MDB_GET_CURRENT) }
    /// `MDB_NEXT_NODUP`: the first value of the next key.
    public func nextKeyBytes() throws -> RawEntry? { try move(MDB_NEXT_NODUP) }
    /// `MDB_NEXT_DUP`: the next value of the current key, nil after its last.
    public func nextDuplicateBytes() throws -> RawEntry? { try move(MDB_NEXT_DUP) }

    /// `MDB_SET_RANGE`: the first key at or after `key`.
    public func seekBytes(atOrAfter key: UnsafeRawBufferPointer) throws -> RawEntry? {
        try move(MDB_SET_RANGE, key: key)
    }

    /// `MDB_SET_KEY`: exactly `key`.
    public func seekBytes(exactly key: UnsafeRawBufferPointer) throws -> RawEntry? {
        try move(MDB_SET_KEY, key: key)
    }

    // MARK: Typed moves

    func decoded(_ entry: RawEntry?) throws -> Entry? {
        guard let entry else { return nil }
        return (try Key.decode(lmdbBytes: entry.key), try Value.decode(lmdbBytes: entry.value))
    }

    public func first() throws -> Entry? { try decoded(firstBytes()) }
    public func last() throws -> Entry? { try decoded(lastBytes()) }
    public func next() throws -> Entry? { try decoded(nextBytes()) }
    public func previous() throws -> Entry? { try decoded(previousBytes()) }
    public func current() throws -> Entry? { try decoded(currentBytes()) }

    /// The first entry whose key is at or after `key` (`MDB_SET_RANGE`).
    public func seek(atOrAfter key: Key) throws -> Entry? {
        try key.withEncodedBytes { try decoded(seekBytes(atOrAfter: $0)) }
    }

    /// The entry whose key is `key` (`MDB_SET_KEY`).
    public func seek(exactly key: Key) throws -> Entry? {
        try key.withEncodedBytes { try decoded(seekBytes(exactly: $0)) }
    }

    // MARK: Writes (the cursor's transaction must be a write transaction)

    /// Stores a pair at the cursor (`mdb_cursor_put`).
    public func put(_ value: Value, forKey key: Key, flags: PutFlags = []) throws {
        try key.withEncodedBytes { keyBytes in
            try value.withEncodedBytes { valueBytes in
                try putBytes(keyBytes, valueBytes, flags: flags)
            }
        }
    }

    /// Stores raw bytes at the cursor (`mdb_cursor_put`).
    public func putBytes(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: PutFlags = []) throws {
        var k = MDB_val(key)
        var v = MDB_val(value)
        try check(mdb_cursor_put(try writable(), &k, &v, flags.rawValue), "mdb_cursor_put(\(label))")
    }

    /// Removes the pair at the cursor (`mdb_cursor_del`).
    public func deleteCurrent() throws {
        try check(mdb_cursor_del(try writable(), 0), "mdb_cursor_del(\(label))")
    }
}
