/// A key inside one space: the space's id (u32, big-endian), then the key's
/// own bytes. One space's keys are one contiguous range of a database, in
/// the order of their own bytes, so that a read of a space walks its keys
/// only and ``Database/removeAll(withPrefix:in:)`` deletes them as one range.
/// The activity views and the keyword index key every space's data this
/// way; every such key is built here, never by hand.
///
/// The key is kept as LMDB stores it (``encoded``); the parts after the
/// space are appended in order, integers big-endian (``BigEndian``) so that
/// they sort numerically.
///
/// ```swift
/// SpaceKey(space: 3, "a1").encoded                          // 00 00 00 03 61 31
/// SpaceKey(space: 2, UInt32(7)).encoded                     // 00 00 00 02 00 00 00 07
/// SpaceKey(space: 2).appending(bigEndian: UInt32(5)).appending("tf".utf8).encoded   // 00 00 00 02 00 00 00 05 74 66
/// SpaceKey.prefix(of: 2)                                    // 00 00 00 02: every key of space 2 starts with it
/// ```
public struct SpaceKey: LMDBCodable, Hashable, Sendable {
    /// The bytes of the space's id, before the key's own.
    public static let spaceByteCount = 4

    @usableFromInline var storage: [UInt8]

    /// The key as LMDB stores it.
    @inlinable
    public var encoded: [UInt8] { storage }

    @inlinable
    init(encoded: [UInt8]) { storage = encoded }

    /// The space's id alone: the start of every key of the space.
    @inlinable
    public init(space: UInt32, capacity: Int = 0) {
        storage = []
        storage.reserveCapacity(SpaceKey.spaceByteCount + capacity)
        BigEndian.append(space, to: &storage)
    }

    /// `space ‖ rest`.
    @inlinable
    public init(space: UInt32, _ rest: some Collection<UInt8>) {
        self.init(space: space, capacity: rest.count)
        storage.append(contentsOf: rest)
    }

    /// `space ‖` the UTF-8 bytes of `string`.
    @inlinable
    public init(space: UInt32, _ string: String) {
        self.init(space: space, string.utf8)
    }

    /// `space ‖ value`, both big-endian: 8 bytes.
    @inlinable
    public init(space: UInt32, _ value: UInt32) {
        self.init(space: space, capacity: 4)
        BigEndian.append(value, to: &storage)
    }

    /// The 4 bytes every key of `space` starts with.
    @inlinable
    public static func prefix(of space: UInt32) -> [UInt8] { BigEndian.bytes(of: space) }

    /// The space of a stored key; nil when it is shorter than a space id.
    @inlinable
    public static func space(of key: UnsafeRawBufferPointer) -> UInt32? {
        key.count >= spaceByteCount ? BigEndian.load(UInt32.self, from: key) : nil
    }

    /// The key's space.
    @inlinable
    public var space: UInt32 { storage.withUnsafeBytes { BigEndian.load(UInt32.self, from: $0) } }

    /// The key's own bytes, after the space.
    @inlinable
    public var rest: ArraySlice<UInt8> { storage[SpaceKey.spaceByteCount...] }

    /// The encoded key's bytes: the space's 4 and the rest.
    @inlinable
    public var count: Int { storage.count }

    /// Appends bytes to the key.
    @inlinable @inline(__always)
    public mutating func append(_ bytes: some Sequence<UInt8>) { storage.append(contentsOf: bytes) }

    /// Appends `value`, big-endian.
    @inlinable @inline(__always)
    public mutating func append<T: FixedWidthInteger>(bigEndian value: T) { BigEndian.append(value, to: &storage) }

    /// This key with `bytes` after it.
    @inlinable
    public func appending(_ bytes: some Sequence<UInt8>) -> SpaceKey {
        var key = self
        key.append(bytes)
        return key
    }

    /// This key with `value` after it, big-endian.
    @inlinable
    public func appending<T: FixedWidthInteger>(bigEndian value: T) -> SpaceKey {
        var key = self
        key.append(bigEndian: value)
        return key
    }

    /// Writes `value` big-endian over the bytes at `offset` of the encoded
    /// key (a part of fixed width, at or after the space's 4 bytes): a key
    /// reused for one part after another, without building it again.
    @inlinable @inline(__always)
    public mutating func replace<T: FixedWidthInteger>(bigEndian value: T, at offset: Int) {
        precondition(offset >= 0 && offset + T.bitWidth / 8 <= storage.count, "a part past the key's end")
        storage.withUnsafeMutableBytes { BigEndian.store(value, into: $0, at: offset) }
    }

    /// Keeps the first `count` bytes of the encoded key (at least the space's).
    @inlinable
    public mutating func removeAll(after count: Int) {
        precondition(count >= SpaceKey.spaceByteCount && count <= storage.count, "a space key cut inside its space id")
        storage.removeLast(storage.count - count)
    }

    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes(body)
    }

    @inlinable
    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes(body)
    }

    /// A stored key read back; one shorter than a space id does not decode.
    public static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> SpaceKey {
        guard bytes.count >= spaceByteCount else { throw LMDBDecodingError(type: "SpaceKey (a 4-byte space id, then the key)", byteCount: bytes.count) }
        return SpaceKey(encoded: [UInt8](bytes))
    }
}

extension Database where Key == SpaceKey {
    /// Calls `body` with each entry of `space`, in key order, until it
    /// returns false; `key` is the part after the space's id.
    public func forEach(inSpace space: UInt32, in txn: ReadTransaction,
                        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(withPrefix: SpaceKey.prefix(of: space), in: txn) { key, value in
            try body(UnsafeRawBufferPointer(rebasing: key[SpaceKey.spaceByteCount...]), value)
        }
    }

    /// How many entries `space` holds.
    public func count(inSpace space: UInt32, in txn: ReadTransaction) throws -> Int {
        var n = 0
        try forEach(inSpace: space, in: txn) { _, _ in
            n += 1
            return true
        }
        return n
    }
}
