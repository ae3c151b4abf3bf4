import LMDB

/// The last position a projection applied, and the version that applied it:
/// the value of `meta`'s `checkpoint:NAME`, 8 bytes position ‖ 4 bytes
/// version, big-endian (`Docs/LogFormat.md`).
public struct Checkpoint: Sendable, Equatable {
    public var position: Position
    public var version: UInt32

    public init(position: Position, version: UInt32) {
        self.position = position
        self.version = version
    }
}

extension Checkpoint: LMDBCodable {
    static let byteCount = 12

    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var bytes = (position.bigEndian, version.bigEndian)
        // The tuple is 16 bytes with padding; the record is the first 12.
        return try Swift.withUnsafeBytes(of: &bytes) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<Self.byteCount])) }
    }

    /// Throws ``LMDBDecodingError`` unless the value is exactly 12 bytes.
    public static func decode(lmdbBytes bytes: UnsafeRawBufferPointer) throws -> Checkpoint {
        guard bytes.count == byteCount else {
            throw LMDBDecodingError(type: "a checkpoint (12 bytes: position, version)", byteCount: bytes.count)
        }
        return Checkpoint(position: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                          version: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
    }
}
