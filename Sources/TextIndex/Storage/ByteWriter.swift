/// Appends the index's binary encodings to a byte array: LEB128 varints,
/// big-endian fixed-width integers, length-prefixed strings.
///
/// ```swift
/// var w = ByteWriter()
/// w.varint(300)          // AC 02
/// w.string("ab")         // 02 61 62
/// w.uint32(7)            // 00 00 00 07
/// ```
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    @inline(__always)
    mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// Unsigned LEB128: 7 bits a byte, low first, high bit set on all but the last.
    @inline(__always)
    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    @inline(__always)
    mutating func varint(_ value: Int) { varint(UInt64(value)) }

    mutating func uint32(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func uint64(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// IEEE 754 bits, big-endian.
    mutating func double(_ value: Double) { uint64(value.bitPattern) }

    /// Varint byte count, then the UTF-8 bytes.
    mutating func string(_ s: String) {
        // A native string's bytes without a mutable copy; others through `withUTF8`.
        let written: Bool? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            varint(utf8.count)
            bytes.append(contentsOf: utf8)
            return true
        }
        if written == true { return }
        var copy = s
        copy.withUTF8 { utf8 in
            varint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func append(_ other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }
}
