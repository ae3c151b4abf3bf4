/// Front coding: sorted keys each written after the bytes it shares with
/// the key before it, as ``SortedPages``' pages and the index's run pages
/// store them (LevelDB's blocks do the same). An entry:
///
/// ```
/// varint  bytes shared with the previous key
/// varint  count of the bytes that follow, then those bytes
/// varint  length of the value, then the value
/// ```
///
/// ```swift
/// var page: [UInt8] = []
/// let shared = FrontCoding.sharedCount(previous, key)
/// FrontCoding.appendEntry(shared: shared, suffix: key.dropFirst(shared), value: value, to: &page)
/// var r = ByteReader(pageBytes)
/// let (kept, suffix) = try r.frontCodedKey()   // key = previous.prefix(kept) + suffix
/// let v = try r.lengthPrefixed()
/// ```
public enum FrontCoding {
    /// How many bytes `a` and `b` share at their start.
    @inlinable @inline(__always)
    public static func sharedCount<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Int {
        var n = 0
        var i = a.startIndex, j = b.startIndex
        while i != a.endIndex && j != b.endIndex && a[i] == b[j] {
            n &+= 1
            a.formIndex(after: &i)
            b.formIndex(after: &j)
        }
        return n
    }

    /// The bytes of an entry sharing `shared` bytes, with `suffix` more key
    /// bytes and a value of `value` bytes.
    @inlinable @inline(__always)
    public static func entrySize(shared: Int, suffix: Int, value: Int) -> Int {
        Varint.size(of: shared) &+ Varint.size(of: suffix) &+ suffix &+ Varint.size(of: value) &+ value
    }

    /// Appends an entry: `shared`, the key's bytes after them, the value.
    @inlinable
    public static func appendEntry(shared: Int, suffix: some Collection<UInt8>, value: some Collection<UInt8>,
                                   to bytes: inout [UInt8]) {
        Varint.append(shared, to: &bytes)
        Varint.append(suffix.count, to: &bytes)
        bytes.append(contentsOf: suffix)
        Varint.append(value.count, to: &bytes)
        bytes.append(contentsOf: value)
    }

    /// Writes an entry into `out` at `offset` (the caller sized `out`: at
    /// most ``entrySize(shared:suffix:value:)`` bytes) and moves `offset` past it.
    @inlinable @inline(__always)
    public static func writeEntry(shared: Int, suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                                  into out: UnsafeMutableRawBufferPointer, at offset: inout Int) {
        Varint.write(shared, into: out, at: &offset)
        Varint.write(suffix.count, into: out, at: &offset)
        if !suffix.isEmpty {
            out.baseAddress!.advanced(by: offset).copyMemory(from: suffix.baseAddress!, byteCount: suffix.count)
        }
        offset &+= suffix.count
        Varint.write(value.count, into: out, at: &offset)
        if !value.isEmpty {
            out.baseAddress!.advanced(by: offset).copyMemory(from: value.baseAddress!, byteCount: value.count)
        }
        offset &+= value.count
    }
}

extension ByteReader {
    /// An entry's key (``FrontCoding``): how many bytes it shares with the
    /// key before it, and the bytes that follow them. The value follows
    /// (``lengthPrefixed()``). The caller checks `shared` against the key before.
    @inlinable @inline(__always)
    public mutating func frontCodedKey() throws(ByteError) -> (shared: Int, suffix: UnsafeRawBufferPointer) {
        let shared = try length()
        let suffix = try lengthPrefixed()
        return (shared, suffix)
    }
}
