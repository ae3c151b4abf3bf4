import LMDB

/// A document id as a key: 4 bytes big-endian, so keys sort numerically.
struct UInt32Key: LMDBCodable, Sendable {
    var value: UInt32
    init(_ value: UInt32) { self.value = value }

    func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: value.bigEndian, body)
    }

    static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> UInt32Key {
        guard bytes.count == 4 else { throw TextIndexError.corrupt("document id key") }
        return UInt32Key(UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)))
    }
}
