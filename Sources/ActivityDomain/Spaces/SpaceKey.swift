import LMDB

/// A key inside one user space: the space's id (u32, big-endian), then the
/// key's own bytes. One space's keys are one contiguous range of a database,
/// so a read of one user walks that user's keys only.
///
/// ```swift
/// let key = SpaceKey(space: 3, "a1")        // 00 00 00 03 61 31
/// try registry.activities.get(key, in: txn)
/// ```
struct SpaceKey: LMDBCodable, Hashable, Sendable {
    var space: UInt32
    var bytes: [UInt8]

    init(space: UInt32, _ string: String) {
        self.space = space
        bytes = Array(string.utf8)
    }

    init(space: UInt32, bytes: [UInt8]) {
        self.space = space
        self.bytes = bytes
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
