import LMDB

/// The engine's own named databases, beside the projections' ones.
///
/// - `log`: position (8 bytes big-endian) → record (see ``RecordLayout``).
/// - `meta`: `format` → 4 bytes; `head` → position and link of the last
///   record (so that a truncated log is detected); `checkpoint:NAME` →
///   position and version of projection NAME.
/// - `idempotency`: key → first position and count of the write that used it.
/// - `redactions`: last position of a redacted range → its first position
///   and the position of the ``RedactionRecord`` that redacted it (see
///   `LogBatch+Redaction.swift`).
struct LogDatabases: Sendable {
    static let names = ["log", "meta", "idempotency", "redactions"]
    let log: Database<UInt64, [UInt8]>
    let meta: Database<String, [UInt8]>
    let idempotency: Database<String, [UInt8]>
    let redactions: Database<UInt64, [UInt8]>

    init(openingIn txn: WriteTransaction) throws {
        log = try txn.createDatabase("log")
        meta = try txn.createDatabase("meta")
        idempotency = try txn.createDatabase("idempotency")
        redactions = try txn.createDatabase("redactions")
    }

    /// The last position and its link (zero and the zero link when empty).
    func head(in txn: ReadTransaction) throws -> (position: Position, link: ChainLink) {
        let cursor = try log.cursor(in: txn)
        guard let last = try cursor.lastBytes() else { return (0, .zero) }
        let position = try UInt64.decode(lmdbBytes: last.key)
        let view = RecordLayout.View(bytes: last.value)
        guard view.bytes.count >= RecordLayout.headerSize else {
            throw EventLogError(.corrupt, operation: "read head", "the last record is \(view.bytes.count) bytes, shorter than a header", position: position)
        }
        return (position, view.link)
    }

    func checkpoint(of name: String, in txn: ReadTransaction) throws -> Checkpoint? {
        try meta.withValue(forKey: "checkpoint:" + name, in: txn) { bytes in
            guard bytes.count == 12 else { return nil }
            return Checkpoint(
                position: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                version: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        } ?? nil
    }

    func setCheckpoint(_ checkpoint: Checkpoint, of name: String, in txn: WriteTransaction) throws {
        var bytes = [UInt8](repeating: 0, count: 12)
        bytes.withUnsafeMutableBytes {
            $0.storeBytes(of: checkpoint.position.bigEndian, as: UInt64.self)
            $0.storeBytes(of: checkpoint.version.bigEndian, toByteOffset: 8, as: UInt32.self)
        }
        try meta.put(bytes, forKey: "checkpoint:" + name, in: txn)
    }

    /// Moves the checkpoint of each of `projections` to `position`, stamped
    /// with its version.
    func setCheckpoints(of projections: [any Projection], to position: Position, in txn: WriteTransaction) throws {
        for projection in projections {
            try setCheckpoint(Checkpoint(position: position, version: projection.version), of: projection.name, in: txn)
        }
    }

    func recordedHead(in txn: ReadTransaction) throws -> (position: Position, link: ChainLink)? {
        try meta.withValue(forKey: "head", in: txn) { bytes in
            guard bytes.count == 40 else { return nil }
            return (UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                    ChainLink(bytes: UnsafeRawBufferPointer(rebasing: bytes[8..<40])))
        } ?? nil
    }

    func setRecordedHead(_ position: Position, link: ChainLink, in txn: WriteTransaction) throws {
        var bytes = [UInt8](repeating: 0, count: 8)
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: position.bigEndian, as: UInt64.self) }
        try meta.put(bytes + link.bytes, forKey: "head", in: txn)
    }
}

/// The last position a projection applied, and the version that applied it.
public struct Checkpoint: Sendable, Equatable {
    public var position: Position
    public var version: UInt32

    public init(position: Position, version: UInt32) {
        self.position = position
        self.version = version
    }
}
