/// Fixed-width integers as stored: big-endian, so that keys of them sort
/// numerically (`memcmp`) and a prefix of a key is a range of numbers.
///
/// ```swift
/// var key: [UInt8] = []
/// BigEndian.append(UInt32(7), to: &key)                              // 00 00 00 07
/// BigEndian.bytes(of: UInt16(258))                                  // [01, 02]
/// key.withUnsafeBytes { BigEndian.load(UInt32.self, from: $0) }     // 7
/// ```
public enum BigEndian {
    /// Appends `value`'s bytes, most significant first.
    @inlinable @inline(__always)
    public static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        Swift.withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// `value`'s bytes, most significant first.
    @inlinable @inline(__always)
    public static func bytes<T: FixedWidthInteger>(of value: T) -> [UInt8] {
        Swift.withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// The `T` stored at `offset` of `bytes` (the caller checked that its
    /// `T.bitWidth / 8` bytes are there).
    @inlinable @inline(__always)
    public static func load<T: FixedWidthInteger>(_: T.Type, from bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> T {
        T(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// Stores `value` at `offset` of `bytes` (the caller sized it).
    @inlinable @inline(__always)
    public static func store<T: FixedWidthInteger>(_ value: T, into bytes: UnsafeMutableRawBufferPointer, at offset: Int = 0) {
        bytes.storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
    }

    /// The `T` of `bytes` exactly (nil when they are not `T.bitWidth / 8` bytes).
    @inlinable
    public static func value<T: FixedWidthInteger>(_: T.Type, of bytes: some Collection<UInt8>) -> T? {
        guard bytes.count == T.bitWidth / 8 else { return nil }
        var v: T = 0
        for b in bytes { v = v << 8 | T(b) }
        return v
    }
}
