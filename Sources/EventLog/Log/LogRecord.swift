import Crypto
import Foundation
import LMDB

/// A record of the log exactly as stored: its position and its bytes
/// (`Docs/LogFormat.md`), with the fields read from them. What a
/// subscription delivers, what a shipper copies to PostgreSQL byte for byte,
/// and what a follower appends.
///
/// ```swift
/// let record = try store.record(at: 42)!
/// print(record.type, record.schemaVersion, record.appendedAt, record.link)
/// ```
public struct LogRecord: Sendable, Equatable {
    public let position: Position
    /// The record's bytes, exactly as the log holds them (a compressed
    /// payload compressed: what a shipper copies and a follower stores).
    public let bytes: [UInt8]
    /// The dictionaries of the store it was read from, which decompress
    /// its payload; nil for a record from elsewhere (PostgreSQL), whose
    /// payload is read once a store holds it and its dictionary.
    let dictionaries: LogDictionaries?

    /// A record read from elsewhere (PostgreSQL, a file). Checks that the
    /// bytes have a record's shape, so the accessors below are safe; the
    /// checksum, digest and link are checked by ``validate()`` and on append.
    public init(position: Position, bytes: [UInt8]) throws {
        guard position > 0 else {
            throw EventLogError(.invalidArgument, operation: "read record", "position 0; positions start at 1")
        }
        let wellFormed = bytes.withUnsafeBytes { RecordLayout.View(bytes: $0).isWellFormed }
        guard wellFormed else {
            throw EventLogError(.corrupt, operation: "read record",
                                "\(bytes.count) bytes are not a record of format \(RecordLayout.format)", position: position)
        }
        self.position = position
        self.bytes = bytes
        dictionaries = nil
    }

    init(trusted position: Position, bytes: [UInt8], dictionaries: LogDictionaries?) {
        self.position = position
        self.bytes = bytes
        self.dictionaries = dictionaries
    }

    public static func == (lhs: LogRecord, rhs: LogRecord) -> Bool {
        lhs.position == rhs.position && lhs.bytes == rhs.bytes
    }

    func view<R>(_ body: (RecordLayout.View) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { try body(RecordLayout.View(bytes: $0)) }
    }

    /// The event type, e.g. `"activity.becameCurrent"`.
    public var type: String { view { String(decoding: $0.type, as: UTF8.self) } }
    public var schemaVersion: UInt32 { view { $0.schemaVersion } }
    public var appendedAtMicroseconds: Int64 { view { $0.micros } }
    public var appendedAt: Date { Date(microsecondsSince1970: appendedAtMicroseconds) }
    /// The payload as appended (decompressed when stored compressed);
    /// empty when redacted. Throws for a compressed payload whose
    /// dictionary is not at hand, or that does not decompress.
    public var payload: [UInt8] {
        get throws { try view { try $0.isRedacted ? [] : decoder.payload(of: $0, at: position, in: nil) } }
    }
    /// Whether the payload is stored compressed.
    public var isCompressed: Bool { view { $0.isCompressed } }
    /// The dictionary a compressed payload names (0: none); nil when the
    /// payload is not compressed.
    public var dictionaryID: UInt32? {
        view { view in
            guard view.isCompressed else { return nil }
            return (try? CompressedPayload(view.storedPayload, payloadLength: view.payloadLength))?.dictionaryID
        }
    }
    /// SHA-256 of the payload as appended (kept when the payload is redacted).
    public var payloadDigest: [UInt8] { view { [UInt8]($0.payloadDigest) } }
    /// The record's link of the hash chain.
    public var link: ChainLink { view { $0.link } }
    public var isRedacted: Bool { view { $0.isRedacted } }
    /// The record as the projections see it (its payload decompressed).
    public var event: RecordedEvent {
        get throws { try view { try decoder.event(of: $0, at: position, in: nil) } }
    }

    /// What reads the payload: the store's dictionaries, or (for a record
    /// from elsewhere) the no-dictionary codec, which throws for a payload
    /// that names one.
    private var decoder: LogDictionaries { dictionaries ?? LogDictionaries.detached }

    /// Checks the record on its own: checksum, and the payload's digest
    /// unless redacted. (Whether its link follows its predecessor's is
    /// checked where the predecessor is known: ``link(after:)``.)
    public func validate() throws {
        try validate(using: decoder, in: nil)
    }

    /// ``validate()``, reading a compressed payload's dictionary from
    /// `dictionaries` (in `txn`: a follower's write, which may have just
    /// stored it).
    func validate(using dictionaries: LogDictionaries, in txn: ReadTransaction?) throws {
        try view { view in
            guard view.storedChecksum == view.computedChecksum else {
                throw EventLogError(.corrupt, operation: "check record", "checksum mismatch", position: position)
            }
            if !view.isRedacted {
                var hasher = SHA256()
                try dictionaries.withPayload(of: view, at: position, in: txn) { hasher.update(bufferPointer: $0) }
                let digest = ChainLink(hasher.finalize())
                guard digest == ChainLink(bytes: view.payloadDigest) else {
                    throw EventLogError(.corrupt, operation: "check record", "the payload's SHA-256 differs from its digest", position: position)
                }
            }
        }
    }

    /// The link this record must carry when it follows a record whose link
    /// is `previous`: equal to ``link`` exactly when the chain holds.
    public func link(after previous: ChainLink) -> ChainLink {
        view { view in
            RecordLayout.link(previous: previous, position: position, schemaVersion: view.schemaVersion,
                              micros: view.micros, payloadDigest: view.payloadDigest, type: view.type)
        }
    }
}

extension ChainLink {
    /// A link from its 32 bytes (as stored in PostgreSQL, say); nil for any other length.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self = bytes.withUnsafeBytes { ChainLink(bytes: $0) }
    }
}
