import LMDB

/// The format of a store's records and metadata: `meta`'s `format`, 4 bytes
/// big-endian. A store of a format this version does not know is refused on
/// open, never misread.
struct StoreFormat: Equatable {
    var version: UInt32

    /// The format this version writes and reads.
    static let current = StoreFormat(version: 1)
}

extension StoreFormat: LMDBCodable {
    func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: version.bigEndian, body)
    }

    /// Throws ``LMDBDecodingError`` unless the value is exactly 4 bytes.
    static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> StoreFormat {
        guard bytes.count == 4 else { throw LMDBDecodingError(type: "a format (4 bytes)", byteCount: bytes.count) }
        return StoreFormat(version: UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)))
    }
}
