import LMDB

/// What `idempotency` keeps of a write made with a key: 8 bytes first
/// position ‖ 8 bytes count, big-endian. A retry with the key returns these
/// positions instead of writing again.
struct IdempotencyEntry: Equatable {
    var first: Position
    var count: UInt64

    /// The positions the write appended; nil when it appended none.
    var positions: ClosedRange<Position>? { count == 0 ? nil : first...(first + count - 1) }
}

extension IdempotencyEntry: LMDBCodable {
    static let byteCount = 16

    func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: (first.bigEndian, count.bigEndian), body)
    }

    /// Throws ``LMDBDecodingError`` unless the value is exactly 16 bytes.
    static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> IdempotencyEntry {
        guard bytes.count == byteCount else {
            throw LMDBDecodingError(type: "an idempotency entry (16 bytes: first position, count)", byteCount: bytes.count)
        }
        return IdempotencyEntry(first: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                                count: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }
}
