import LMDB

/// A key inside one user space: the space's id (u32, big-endian), then the
/// key's own bytes. One space's keys are one contiguous range of a database,
/// so a read of one user walks that user's keys only.
///
/// Every key of the activity views that starts with a space is built here,
/// in one of these shapes (`Docs/LogFormat.md`, "Keys of the activity
/// views"), and nowhere by hand:
///
/// | built by | bytes | in |
/// |---|---|---|
/// | `SpaceKey(space:_:)` | space ‖ name | registry, current, saved, items, client states |
/// | `SpaceKey(space:)` | space | `spaces.byID` |
/// | `SpaceKey(space:position:)` | space ‖ position (u64) | `spaces.events` |
/// | `SpaceKey(space:indexing:limit:of:)` | space ‖ value, cut at `limit` bytes ‖ 0x00 ‖ name | items by domain, saved copies by targetContentIdentifier and webpageURL |
/// | `SpaceKey(space:tag:_:limit:)` | space ‖ tag byte ‖ name, cut at `limit` bytes | saved-copy removals |
///
/// (The expiration index leads with the time instead: ``ExpirationKey``.)
///
/// ```swift
/// let key = SpaceKey(space: 3, "a1")        // 00 00 00 03 61 31
/// try registry.activities.get(key, in: txn)
/// let entry = SpaceKey(space: 3, indexing: "orders", limit: 250, of: "o1").encoded   // 00 00 00 03 6f 72 64 65 72 73 00 6f 31
/// ```
struct SpaceKey: LMDBCodable, Hashable, Sendable {
    var space: UInt32
    var bytes: [UInt8]

    init(space: UInt32, _ string: String) {
        self.space = space
        bytes = Array(string.utf8)
    }

    init(space: UInt32, bytes: [UInt8] = []) {
        self.space = space
        self.bytes = bytes
    }

    /// An event of the space: space ‖ position, both big-endian.
    init(space: UInt32, position: UInt64) {
        self.init(space: space, bytes: withUnsafeBytes(of: position.bigEndian) { Array($0) })
    }

    /// An index entry: space ‖ the first `limit` UTF-8 bytes of `value` ‖
    /// 0x00 ‖ `name`, the name the value belongs to. The entries of one
    /// value (and of every value it is a prefix of) are one key range
    /// (``indexPrefix(space:_:limit:)``); a value cut at `limit` is compared
    /// in full in the record the name leads to. Values hold no NUL.
    init(space: UInt32, indexing value: String, limit: Int, of name: String) {
        self.init(space: space, bytes: keyPrefix(value, limit: limit) + [0] + Array(name.utf8))
    }

    /// A tagged name: space ‖ `tag` ‖ the first `limit` UTF-8 bytes of `name`.
    init(space: UInt32, tag: UInt8, _ name: String, limit: Int) {
        self.init(space: space, bytes: [tag] + keyPrefix(name, limit: limit))
    }

    /// The bytes every index entry of `value` (cut at `limit`) starts with;
    /// `exact` adds the 0x00 that ends the value, so that the range holds
    /// that value's entries alone.
    static func indexPrefix(space: UInt32, _ value: String, limit: Int, exact: Bool) -> [UInt8] {
        prefix(of: space) + keyPrefix(value, limit: limit) + (exact ? [0] : [])
    }

    /// The key as LMDB stores it.
    var encoded: [UInt8] { Self.prefix(of: space) + bytes }

    /// The key of a space's event (``init(space:position:)``) read back: its position.
    var position: UInt64? {
        guard bytes.count == 8 else { return nil }
        return bytes.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// The key's own part as UTF-8 text.
    var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The 4 bytes every key of `space` starts with.
    static func prefix(of space: UInt32) -> [UInt8] {
        withUnsafeBytes(of: space.bigEndian) { Array($0) }
    }

    func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var encoded = Self.prefix(of: space)
        encoded.append(contentsOf: bytes)
        return try encoded.withUnsafeBytes(body)
    }

    static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> SpaceKey {
        guard bytes.count >= 4 else { throw PayloadError("a user-space key of \(bytes.count) bytes; keys start with a 4-byte space id") }
        return SpaceKey(space: UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)), bytes: Array(bytes[4...]))
    }
}

extension Database where Key == SpaceKey {
    /// Calls `body` with each entry of `space`, in key order, until it returns false.
    func forEach(inSpace space: UInt32, in txn: ReadTransaction,
                 _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(withPrefix: SpaceKey.prefix(of: space), in: txn, body)
    }

    /// Calls `body` with each entry whose key starts with `prefix` (the space
    /// id included), in key order, until it returns false. `key` is the part
    /// after the 4-byte space id.
    func forEach(withPrefix prefix: [UInt8], in txn: ReadTransaction,
                 _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        let cursor = try self.cursor(in: txn)
        var entry = try prefix.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.starts(with: prefix) {
            guard try body(UnsafeRawBufferPointer(rebasing: e.key[4...]), e.value) else { return }
            entry = try cursor.nextBytes()
        }
    }

    /// How many entries `space` holds.
    func count(inSpace space: UInt32, in txn: ReadTransaction) throws -> Int {
        var n = 0
        try forEach(inSpace: space, in: txn) { _, _ in
            n += 1
            return true
        }
        return n
    }
}

/// A key of the items' expiration index (item store version 5): the
/// expiration (microseconds since 1970 with the sign bit flipped,
/// big-endian, so that byte order is time order), then the position of the
/// event that wrote the items (u64, big-endian). The value names that
/// event's items with this expiration (``DomainEntry``: u32 byte offsets in
/// the payload, ascending); their space and identifiers are read from the
/// event. One entry per event and expiration: an event's items that share
/// the default expiration of its time cost one key. The time leads, so
/// that `purgeExpired` walks every space's expired items as one range; the
/// position follows, so that a transaction's entries are appended at the
/// end of the tree instead of split into every space's range (full pages,
/// few touched).
///
/// ```swift
/// let key = ExpirationKey(micros: 0, position: 7).encoded
/// // 80 00 00 00 00 00 00 00  00 00 00 00 00 00 00 07
/// ```
struct ExpirationKey: Sendable, Equatable {
    var micros: Int64
    var position: UInt64

    init(micros: Int64, position: UInt64) {
        self.micros = micros
        self.position = position
    }

    /// The 8 bytes of the time: every key before a time sorts before these bytes.
    static func timeBytes(_ micros: Int64) -> [UInt8] {
        withUnsafeBytes(of: (UInt64(bitPattern: micros) ^ (1 << 63)).bigEndian) { Array($0) }
    }

    var encoded: [UInt8] {
        Self.timeBytes(micros) + withUnsafeBytes(of: position.bigEndian) { Array($0) }
    }

    /// A stored key read back; nil when it is not 16 bytes.
    init?<C: Collection>(decoding key: C) where C.Element == UInt8 {
        let key = Array(key)
        guard key.count == 16 else { return nil }
        micros = Int64(bitPattern: key[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } ^ (1 << 63))
        position = key[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}

extension SpaceKey {
    /// Deletes every entry of `db` whose key starts with `prefix` (a space's
    /// 4-byte id): one cursor range.
    static func removeRange<K, V>(_ db: Database<K, V>, prefix: [UInt8], in txn: WriteTransaction) throws {
        let cursor = try db.cursor(in: txn)
        var entry = try prefix.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.starts(with: prefix) {
            try cursor.deleteCurrent()
            // After `mdb_cursor_del` the cursor stands on the next pair: MDB_NEXT returns it.
            entry = try cursor.nextBytes()
        }
    }
}
