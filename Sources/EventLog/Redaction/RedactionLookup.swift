import Foundation
import LMDB

/// Finds the redaction record that authorized a redacted record, for one
/// read or write transaction: first in the `redactions` database (a
/// redaction record of this log), then among the *pending authorizations*:
/// redaction records past the head that a follower or a restore was handed
/// with the redacted records they authorize (`Docs/LogFormat.md`,
/// "Pending authorizations"). Each redaction record is decoded once.
final class RedactionLookup {
    let databases: LogDatabases
    private var decoded: [Position: RedactionRecord?] = [:]
    private var pendingRecords: [(position: Position, record: RedactionRecord)]?

    init(_ databases: LogDatabases) {
        self.databases = databases
    }

    /// `event` with ``RecordedEvent/redactedBy`` and
    /// ``RecordedEvent/redactionRecord`` filled when it is redacted and
    /// something authorizes it.
    func describe(_ event: RecordedEvent, in txn: ReadTransaction) throws -> RecordedEvent {
        guard event.isRedacted else { return event }
        var event = event
        if let by = try databases.redactedBy(event.position, in: txn) {
            event.redactedBy = by
            event.redactionRecord = try logRecord(at: by, in: txn)
        } else if let pending = try pending(covering: event.position, in: txn) {
            event.redactedBy = pending.position
            event.redactionRecord = pending.record
        }
        return event
    }

    /// The pending authorization past `position` that covers it.
    func pending(covering position: Position, in txn: ReadTransaction) throws -> (position: Position, record: RedactionRecord)? {
        try pending(in: txn).first { $0.position > position && $0.record.positions.contains(position) }
    }

    /// Every pending authorization, by position (read once).
    func pending(in txn: ReadTransaction) throws -> [(position: Position, record: RedactionRecord)] {
        if let pendingRecords { return pendingRecords }
        var result: [(position: Position, record: RedactionRecord)] = []
        for record in try databases.pendingRedactions(in: txn) {
            if let decoded = try? PendingRedaction.check(record) { result.append((record.position, decoded)) }
        }
        pendingRecords = result
        return result
    }

    /// Notes a pending authorization stored (or removed, with nil) by the current write.
    func setPending(_ record: RedactionRecord?, at position: Position, in txn: ReadTransaction) throws {
        var list = try pending(in: txn).filter { $0.position != position }
        if let record { list.append((position, record)) }
        pendingRecords = list.sorted { $0.position < $1.position }
    }

    /// The redaction record at `position` of the log, decoded; nil when the
    /// record there is not one (damage, which `verify` reports).
    private func logRecord(at position: Position, in txn: ReadTransaction) throws -> RedactionRecord? {
        if let known = decoded[position] { return known }
        let record: RedactionRecord? = try databases.log.withValue(forKey: position, in: txn) { bytes in
            let view = RecordLayout.View(bytes: bytes)
            guard view.isWellFormed, !view.isRedacted, view.type.elementsEqual(RedactionRecord.type.utf8),
                  view.schemaVersion == RedactionRecord.schemaVersion else { return nil }
            return try? RedactionRecord(payload: [UInt8](view.storedPayload))
        } ?? nil
        decoded[position] = record
        return record
    }
}

/// A redaction record a follower or a restore holds before its log reaches
/// it: the position it will have, its link there, and the range of this
/// log's redacted records it authorizes. `verify` lists them
/// (``LogVerification/pendingRedactions``): records it covers are not
/// tampering, but nothing in this log proves them yet; the record, when
/// the log reaches its position, must be byte for byte this one.
public struct PendingRedaction: Sendable, Equatable {
    /// The position of the redaction record, past the head.
    public var position: Position
    /// Its link of the hash chain at that position, as the stream holds it.
    public var link: ChainLink
    /// How many redacted records of this log it authorizes.
    public var covers: UInt64

    /// Checks a pending authorization's bytes: a whole record (checksum,
    /// digest) of type `eventlog.redaction`, schema version 1, whose payload
    /// decodes and names only positions before its own.
    static func check(_ record: LogRecord) throws -> RedactionRecord {
        try record.validate()
        guard !record.isRedacted, record.type == RedactionRecord.type, record.schemaVersion == RedactionRecord.schemaVersion else {
            throw EventLogError(.corrupt, operation: "check redaction authorization",
                                "the record is \(record.type) v\(record.schemaVersion)\(record.isRedacted ? ", redacted" : ""); allowed: an unredacted \(RedactionRecord.type) v\(RedactionRecord.schemaVersion)",
                                position: record.position)
        }
        let decoded: RedactionRecord
        do { decoded = try RedactionRecord(payload: try record.payload) } catch {
            throw EventLogError(.corrupt, operation: "check redaction authorization", "\(error)", position: record.position)
        }
        guard let last = decoded.positions.last, last < record.position else {
            throw EventLogError(.corrupt, operation: "check redaction authorization",
                                "it names \(decoded.positions.last.map { "position \($0)" } ?? "no position"); a redaction record covers 1 or more positions before its own",
                                position: record.position)
        }
        return decoded
    }
}

extension LogDatabases {
    /// The `meta` key of the pending authorization at `position`: the prefix
    /// and the position in 20 decimal digits, so that keys sort by position.
    static func pendingRedactionKey(_ position: Position) -> String {
        let digits = String(position)
        return pendingRedactionPrefix + String(repeating: "0", count: 20 - digits.count) + digits
    }

    static let pendingRedactionPrefix = "pendingRedaction:"

    /// Every pending authorization's record, by position. A key or value
    /// that is not a record is a corrupt store, named.
    func pendingRedactions(in txn: ReadTransaction) throws -> [LogRecord] {
        var result: [LogRecord] = []
        let cursor = try meta.cursor(in: txn)
        var entry = try cursor.seek(atOrAfter: Self.pendingRedactionPrefix)
        while let (key, value) = entry, key.hasPrefix(Self.pendingRedactionPrefix) {
            guard let position = UInt64(key.dropFirst(Self.pendingRedactionPrefix.count)), position > 0 else {
                throw EventLogError.corrupt(key: key, database: "meta", operation: "read pending redactions", "the key does not end in a position")
            }
            do {
                result.append(try LogRecord(position: position, bytes: value))
            } catch {
                throw EventLogError.corrupt(key: key, database: "meta", operation: "read pending redactions", "\(value.count) bytes are not a record")
            }
            entry = try cursor.next()
        }
        return result
    }
}
