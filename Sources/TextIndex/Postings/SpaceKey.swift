import LMDB

/// A key of databases `terms` and `masks`: a space id then a document id
/// (or block), each 4 bytes big-endian, so that a space's keys are one
/// contiguous range and sort numerically within it. `docs` keys begin with
/// the same 8 bytes, a space and a page (``DocumentChunks``).
///
/// ```swift
/// SpaceKey(space: 2, 7)    // 00 00 00 02 00 00 00 07
/// ```
struct SpaceKey: LMDBCodable, Sendable {
    var space: UInt32
    var value: UInt32

    init(space: UInt32, _ value: UInt32) {
        self.space = space
        self.value = value
    }

    func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: (UInt64(space) << 32 | UInt64(value)).bigEndian, body)
    }

    static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> SpaceKey {
        guard bytes.count == 8 else { throw TextIndexError.corrupt("space and document id key") }
        let both = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
        return SpaceKey(space: UInt32(truncatingIfNeeded: both >> 32), UInt32(truncatingIfNeeded: both))
    }
}
