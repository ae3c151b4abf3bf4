/// Reads what ``ByteWriter`` wrote, from bytes that LMDB owns (valid until
/// the transaction ends). Every read checks bounds and throws
/// ``TextIndexError/corrupt(_:)`` rather than trap on damaged data.
///
/// ```swift
/// var r = ByteReader(buffer)
/// let n = try r.varint()
/// let s = try r.string()
/// ```
struct ByteReader {
    let base: UnsafeRawBufferPointer
    var offset: Int

    init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.base = buffer
        self.offset = offset
    }

    var isAtEnd: Bool { offset >= base.count }

    @inline(__always)
    mutating func byte() throws -> UInt8 {
        guard offset < base.count else { throw TextIndexError.corrupt("truncated value") }
        let b = base[offset]
        offset += 1
        return b
    }

    @inline(__always)
    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < base.count, shift < 64 else { throw TextIndexError.corrupt("bad varint") }
            let b = base[offset]
            offset += 1
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    @inline(__always)
    mutating func int() throws -> Int {
        let v = try varint()
        guard v <= UInt64(Int32.max) * 16 else { throw TextIndexError.corrupt("count out of range") }
        return Int(v)
    }

    /// A number of elements that follow, each at least one byte long: never
    /// more than the bytes left, so that a damaged count is an error rather
    /// than a huge allocation.
    mutating func count() throws -> Int {
        let n = try int()
        guard n <= base.count - offset else { throw TextIndexError.corrupt("count past the end") }
        return n
    }

    mutating func uint32() throws -> UInt32 {
        guard offset + 4 <= base.count else { throw TextIndexError.corrupt("truncated value") }
        let v = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        offset += 4
        return v
    }

    mutating func uint64() throws -> UInt64 {
        guard offset + 8 <= base.count else { throw TextIndexError.corrupt("truncated value") }
        let v = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        offset += 8
        return v
    }

    mutating func double() throws -> Double { Double(bitPattern: try uint64()) }

    /// The next `count` bytes, without copying.
    mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, offset + count <= base.count else { throw TextIndexError.corrupt("truncated value") }
        let slice = UnsafeRawBufferPointer(rebasing: base[offset..<(offset + count)])
        offset += count
        return slice
    }

    mutating func string() throws -> String {
        let n = try int()
        return String(decoding: try bytes(n), as: UTF8.self)
    }

    mutating func skipString() throws {
        let n = try int()
        _ = try bytes(n)
    }
}
