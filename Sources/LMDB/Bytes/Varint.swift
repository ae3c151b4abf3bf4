/// Unsigned LEB128, the one varint of every stored format: 7 bits a byte,
/// low bits first, the high bit set on every byte but the last.
///
/// ```swift
/// var out: [UInt8] = []
/// Varint.append(300, to: &out)                  // AC 02
/// Varint.size(of: 300)                          // 2
/// try out.withUnsafeBufferPointer { b in
///     var p = b.baseAddress!
///     return try Varint.read(UInt32.self, from: &p, end: p + b.count)   // 300, p past the 2 bytes
/// }
/// ```
///
/// A read takes at most the bytes its type needs (5 for `UInt32`, 10 for
/// `UInt64`) and refuses a value wider than the type (``VarintError``);
/// padding within those bytes (`80 00` for 0) reads as the value it
/// encodes, as protobuf's readers take it. Writers write the shortest form.
public enum Varint {
    /// The most bytes a varint of `T` takes: 5 for `UInt32`, 10 for `UInt64`.
    @inlinable
    public static func maximumBytes<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) -> Int {
        (T.bitWidth + 6) / 7
    }

    /// Calls `emit` with each byte of `value`'s varint, first to last: the
    /// encoding, written once for every writer below.
    @inlinable @inline(__always)
    public static func forEachByte(of value: UInt64, _ emit: (UInt8) -> Void) {
        var v = value
        while v >= 0x80 {
            emit(UInt8(truncatingIfNeeded: v) | 0x80)
            v &>>= 7
        }
        emit(UInt8(truncatingIfNeeded: v))
    }

    /// The bytes of `value`'s varint: 1 to 10.
    @inlinable @inline(__always)
    public static func size(of value: UInt64) -> Int {
        (64 &- (value | 1).leadingZeroBitCount &+ 6) / 7
    }

    /// The bytes of `value`'s varint (`value` is not negative).
    @inlinable @inline(__always)
    public static func size(of value: Int) -> Int { size(of: UInt64(value)) }

    /// Appends `value`'s varint to `bytes`.
    @inlinable @inline(__always)
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        forEachByte(of: value) { bytes.append($0) }
    }

    /// Appends `value`'s varint to `bytes` (`value` is not negative).
    @inlinable @inline(__always)
    public static func append(_ value: Int, to bytes: inout [UInt8]) { append(UInt64(value), to: &bytes) }

    /// Writes `value`'s varint into `out` at `offset` and moves `offset`
    /// past it; the caller sized `out` (at most 10 bytes a value).
    @inlinable @inline(__always)
    public static func write(_ value: UInt64, into out: UnsafeMutableRawBufferPointer, at offset: inout Int) {
        forEachByte(of: value) { b in
            out[offset] = b
            offset &+= 1
        }
    }

    /// Writes `value`'s varint (not negative) into `out` at `offset` and moves `offset` past it.
    @inlinable @inline(__always)
    public static func write(_ value: Int, into out: UnsafeMutableRawBufferPointer, at offset: inout Int) {
        write(UInt64(value), into: out, at: &offset)
    }

    /// Writes `value`'s varint into `out` at `offset` and moves `offset` past it.
    @inlinable @inline(__always)
    public static func write(_ value: UInt64, into out: UnsafeMutableBufferPointer<UInt8>, at offset: inout Int) {
        write(value, into: UnsafeMutableRawBufferPointer(out), at: &offset)
    }

    /// Reads the varint at `p` (bytes before `end`) as a `T`, and moves `p`
    /// past it. Throws ``VarintError/cutShort`` when `end` comes first, and
    /// ``VarintError/tooLong(maximumBytes:)`` for more bytes than `T` takes or
    /// a value wider than `T`; `p` is then somewhere within the varint.
    @inlinable @inline(__always)
    public static func read<T: FixedWidthInteger & UnsignedInteger>(_: T.Type, from p: inout UnsafePointer<UInt8>,
                                                                    end: UnsafePointer<UInt8>) throws(VarintError) -> T {
        guard p < end else { throw .cutShort }
        var b = p.pointee
        p += 1
        if b < 0x80 { return T(truncatingIfNeeded: b) }   // nearly every length and delta
        var value = T(truncatingIfNeeded: b & 0x7F)
        var shift = 7
        while true {
            guard p < end else { throw .cutShort }
            b = p.pointee
            p += 1
            let bits = T(truncatingIfNeeded: b & 0x7F)
            if shift > T.bitWidth - 7 {
                // The last byte `T` allows: it ends the varint, and its bits fit.
                guard b < 0x80, bits &>> (T.bitWidth - shift) == 0 else {
                    throw .tooLong(maximumBytes: maximumBytes(T.self))
                }
            }
            value |= bits &<< shift
            if b < 0x80 { return value }
            shift &+= 7
        }
    }
}

/// A varint that does not read: its bytes end first, or it is longer than
/// its integer type allows.
///
/// ```swift
/// catch VarintError.cutShort { … }
/// ```
public enum VarintError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes end before a byte without the high bit.
    case cutShort
    /// More bytes than the integer takes (`maximumBytes`), or a value wider than it.
    case tooLong(maximumBytes: Int)

    public var description: String {
        switch self {
        case .cutShort: "varint cut short (its last byte has the high bit set)"
        case .tooLong(let n): "varint longer than the \(n) bytes its integer takes, or wider than that integer"
        }
    }
}
