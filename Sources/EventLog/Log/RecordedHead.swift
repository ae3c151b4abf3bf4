import LMDB

/// The head a commit recorded: `meta`'s `head`, 8 bytes position ‖ 32 bytes
/// link of the last record. Verification compares it with the log's last
/// record, so that records cut from the end are found.
struct RecordedHead: Equatable {
    var position: Position
    var link: ChainLink
}

extension RecordedHead: LMDBCodable {
    static let byteCount = 40

    func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var bytes = (position.bigEndian, link)
        return try Swift.withUnsafeBytes(of: &bytes) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<Self.byteCount])) }
    }

    /// Throws ``LMDBDecodingError`` unless the value is exactly 40 bytes.
    static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> RecordedHead {
        guard bytes.count == byteCount else {
            throw LMDBDecodingError(type: "a head (40 bytes: position, link)", byteCount: bytes.count)
        }
        return RecordedHead(position: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                            link: ChainLink(bytes: UnsafeRawBufferPointer(rebasing: bytes[8..<40])))
    }
}
