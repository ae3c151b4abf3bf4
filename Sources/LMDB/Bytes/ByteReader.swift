/// Reads stored bytes front to back: varints (``Varint``), big-endian
/// integers (``BigEndian``), runs of bytes and length-prefixed values. Every
/// read checks the bytes left and throws ``ByteError`` rather than trap on
/// damaged data; the bytes are the caller's (often LMDB's, valid until the
/// transaction ends), nothing is copied.
///
/// A struct the caller keeps in a local, its reads inlined: what the lookups
/// of ``SortedPages`` and the index's postings read with.
///
/// ```swift
/// var r = ByteReader(value)
/// let count = try r.varint()              // UInt64
/// let offset = try r.varint(as: UInt32.self)
/// let block = try r.bigEndian(UInt32.self)
/// let name = try r.lengthPrefixed()       // varint length, then the bytes
/// ```
public struct ByteReader {
    /// All the bytes; reads start at ``offset``.
    public let base: UnsafeRawBufferPointer
    /// Where the next read starts.
    public var offset: Int

    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        base = bytes
        self.offset = offset
    }

    /// Whether every byte has been read.
    @inlinable
    public var isAtEnd: Bool { offset >= base.count }

    /// The bytes not read yet.
    @inlinable
    public var remaining: Int { base.count &- offset }

    @inlinable @inline(__always)
    public mutating func byte() throws(ByteError) -> UInt8 {
        guard offset < base.count else { throw ByteError(.cutShort(needed: 1, left: 0), at: offset) }
        let b = base[offset]
        offset &+= 1
        return b
    }

    /// A varint (``Varint``) of at most 10 bytes.
    @inlinable @inline(__always)
    public mutating func varint() throws(ByteError) -> UInt64 { try varint(as: UInt64.self) }

    /// A varint of at most the bytes `T` takes, its value within `T`.
    @inlinable @inline(__always)
    public mutating func varint<T: FixedWidthInteger & UnsignedInteger>(as type: T.Type) throws(ByteError) -> T {
        guard offset < base.count else { throw ByteError(.varint(.cutShort), at: offset) }
        let start = base.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var p = start + offset
        do throws(VarintError) {
            let value = try Varint.read(type, from: &p, end: start + base.count)
            offset = p - start
            return value
        } catch {
            throw ByteError(.varint(error), at: offset)
        }
    }

    /// A count or a length: a varint of at most 5 bytes (under 2³²), as an `Int`.
    @inlinable @inline(__always)
    public mutating func length() throws(ByteError) -> Int { Int(try varint(as: UInt32.self)) }

    /// A fixed-width integer stored big-endian.
    @inlinable @inline(__always)
    public mutating func bigEndian<T: FixedWidthInteger>(_: T.Type) throws(ByteError) -> T {
        let n = T.bitWidth / 8
        guard n <= base.count &- offset else { throw ByteError(.cutShort(needed: n, left: base.count &- offset), at: offset) }
        let v = BigEndian.load(T.self, from: base, at: offset)
        offset &+= n
        return v
    }

    /// IEEE 754 bits, big-endian (``ByteWriter/double(_:)``).
    @inlinable
    public mutating func double() throws(ByteError) -> Double { Double(bitPattern: try bigEndian(UInt64.self)) }

    /// The next `count` bytes, without copying.
    @inlinable @inline(__always)
    public mutating func bytes(_ count: Int) throws(ByteError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= base.count &- offset else {
            throw ByteError(.cutShort(needed: count, left: base.count &- offset), at: offset)
        }
        let slice = UnsafeRawBufferPointer(rebasing: base[offset..<(offset &+ count)])
        offset &+= count
        return slice
    }

    /// A varint of at most `maximum`.
    @inlinable @inline(__always)
    public mutating func varint(atMost maximum: UInt64) throws(ByteError) -> UInt64 {
        let start = offset
        let value = try varint()
        guard value <= maximum else { throw ByteError(.outOfRange(value: value, maximum: maximum), at: start) }
        return value
    }

    /// A varint length, then that many bytes (``ByteWriter/lengthPrefixed(_:)``).
    @inlinable @inline(__always)
    public mutating func lengthPrefixed() throws(ByteError) -> UnsafeRawBufferPointer {
        try bytes(try length())
    }

    /// A varint length, then that many bytes of UTF-8 (``ByteWriter/string(_:)``;
    /// bytes that are not UTF-8 read as U+FFFD, as `String(decoding:as:)` makes them).
    @inlinable
    public mutating func string() throws(ByteError) -> String {
        String(decoding: try lengthPrefixed(), as: UTF8.self)
    }
}

/// Stored bytes that do not read as their format says: where, and why.
///
/// ```swift
/// catch let error as ByteError { print(error) }   // varint cut short (…) at byte 12 of 13
/// ```
public struct ByteError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Problem: Equatable, Sendable {
        /// A varint that does not read.
        case varint(VarintError)
        /// `needed` bytes asked for where `left` remain.
        case cutShort(needed: Int, left: Int)
        /// A number over what its place allows.
        case outOfRange(value: UInt64, maximum: UInt64)
    }

    public var problem: Problem
    /// Where the read that failed started, in bytes from the start.
    public var offset: Int

    @inlinable
    public init(_ problem: Problem, at offset: Int) {
        self.problem = problem
        self.offset = offset
    }

    public var description: String {
        switch problem {
        case .varint(let error): "\(error) at byte \(offset)"
        case .cutShort(let needed, let left): "\(needed) bytes needed at byte \(offset), \(left) left"
        case .outOfRange(let value, let maximum): "\(value) at byte \(offset), over the \(maximum) allowed there"
        }
    }
}
