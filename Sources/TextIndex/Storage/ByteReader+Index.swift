import LMDB

/// The index's stored formats read with the byte kit's ``ByteReader``: a
/// count, a length or an offset is a varint (``int()``), a string a varint
/// byte count then its UTF-8 bytes. What a format's decoder does with
/// bytes that do not read: ``TextIndexError/reading(_:_:)``.
///
/// ```swift
/// var r = ByteReader(value)
/// let n = try r.count()       // elements that follow, each at least a byte
/// let name = try r.string()
/// ```
extension ByteReader {
    /// The largest count, length or offset the index reads (far above any it writes).
    static let maximumInt = UInt64(Int32.max) * 16

    /// A count, a length or an offset: a varint of at most ``maximumInt``.
    @inline(__always)
    mutating func int() throws(ByteError) -> Int { Int(try varint(atMost: ByteReader.maximumInt)) }

    /// A number of elements that follow, each at least one byte long: never
    /// more than the bytes left, so that a damaged count is an error rather
    /// than a huge allocation.
    mutating func count() throws(ByteError) -> Int {
        let start = offset
        let n = try int()
        guard n <= remaining else { throw ByteError(.cutShort(needed: n, left: remaining), at: start) }
        return n
    }

    /// Passes over a string (``string()``).
    mutating func skipString() throws(ByteError) { _ = try bytes(try int()) }
}

extension TextIndexError {
    /// Runs `body`, a decoding of stored `what`: bytes that do not read
    /// (``ByteError``) are a corrupt index naming `what`; other errors pass.
    @inline(__always)
    static func reading<R>(_ what: @autoclosure () -> String, _ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as ByteError {
            throw TextIndexError.corrupt("\(what()): \(error)")
        }
    }
}
