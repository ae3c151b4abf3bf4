import LMDB

/// The format of a store's records and metadata: `meta`'s `format`, 4 bytes
/// big-endian. A store of a format this version does not know is refused on
/// open, never misread.
struct StoreFormat: Equatable {
    var version: UInt32

    /// The format this version writes: records of format 2 may compress
    /// their payloads (`dictionaries` holds what they name).
    static let current = StoreFormat(version: 2)
    /// The formats it reads: a store of format 1 opens, and becomes format
    /// 2 when it is opened for writing (its records stay as they are, until
    /// `compact` rewrites them).
    static let readable: ClosedRange<UInt32> = 1...2
    /// The format of the index environment (`index/`'s `meta`), which
    /// holds no records: 1, unchanged by the log's compression.
    static let index = StoreFormat(version: 1)
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
