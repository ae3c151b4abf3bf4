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

/// The checkpoints of the projections of one environment: `meta`'s
/// `checkpoint:NAME` entries (the log environment's, or the index
/// environment's). A value of the wrong length is a corrupt store,
/// reported with its key.
struct CheckpointTable: Sendable {
    let meta: Database<String, [UInt8]>

    private var checkpoints: Database<String, Checkpoint> { meta.reinterpreted() }

    static func key(_ name: String) -> String { "checkpoint:" + name }

    func checkpoint(of name: String, in txn: ReadTransaction) throws -> Checkpoint? {
        do {
            return try checkpoints.get(Self.key(name), in: txn)
        } catch let error as LMDBDecodingError {
            throw EventLogError.corrupt(key: Self.key(name), database: meta.name ?? "main", operation: "read", error.description)
        }
    }

    func set(_ checkpoint: Checkpoint, of name: String, in txn: WriteTransaction) throws {
        try checkpoints.put(checkpoint, forKey: Self.key(name), in: txn)
    }

    /// Moves the checkpoint of each of `projections` to `position`, stamped
    /// with its version.
    func set(_ projections: [any Projection], to position: Position, in txn: WriteTransaction) throws {
        for projection in projections {
            try set(Checkpoint(position: position, version: projection.version), of: projection.name, in: txn)
        }
    }

    func remove(_ name: String, in txn: WriteTransaction) throws {
        _ = try meta.delete(Self.key(name), in: txn)
    }
}
