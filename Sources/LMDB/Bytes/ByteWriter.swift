/// Appends stored formats to a byte array: varints (``Varint``), big-endian
/// integers (``BigEndian``), length-prefixed bytes and strings. What
/// ``ByteReader`` reads back.
///
/// ```swift
/// var w = ByteWriter()
/// w.varint(300)                  // AC 02
/// w.string("ab")                 // 02 61 62
/// w.bigEndian(UInt32(7))         // 00 00 00 07
/// ```
public struct ByteWriter {
    public var bytes: [UInt8] = []

    @inlinable
    public init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    @inlinable @inline(__always)
    public mutating func byte(_ b: UInt8) { bytes.append(b) }

    @inlinable @inline(__always)
    public mutating func varint(_ value: UInt64) { Varint.append(value, to: &bytes) }

    /// A varint of `value` (not negative).
    @inlinable @inline(__always)
    public mutating func varint(_ value: Int) { Varint.append(UInt64(value), to: &bytes) }

    @inlinable @inline(__always)
    public mutating func bigEndian<T: FixedWidthInteger>(_ value: T) { BigEndian.append(value, to: &bytes) }

    /// IEEE 754 bits, big-endian.
    @inlinable
    public mutating func double(_ value: Double) { bigEndian(value.bitPattern) }

    /// A varint byte count, then the bytes (``ByteReader/lengthPrefixed()``).
    @inlinable
    public mutating func lengthPrefixed(_ other: some Collection<UInt8>) {
        varint(other.count)
        bytes.append(contentsOf: other)
    }

    /// A varint byte count, then the UTF-8 bytes.
    @inlinable
    public mutating func string(_ s: String) {
        // A native string's bytes without a mutable copy; others through `withUTF8`.
        let written: Bool? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            lengthPrefixed(utf8)
            return true
        }
        if written == true { return }
        var copy = s
        copy.withUTF8 { lengthPrefixed($0) }
    }

    @inlinable
    public mutating func append(_ other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }
}
