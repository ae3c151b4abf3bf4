import Foundation
import LMDB

/// The write side of one ``EventStore/write(_:_:)-(_,(LogBatch)->R)``: appends events to the
/// log and applies them to every projection, in the writer's transaction.
///
/// ```swift
/// try store.write { batch in
///     let state = try store.views.orders.status(of: "o1", in: batch.transaction)  // validate…
///     try batch.append(NewEvent(type: "order.shipped", schemaVersion: 1, payload: bytes))
/// }
/// ```
///
/// Reads through ``transaction`` see every event appended so far in this
/// batch, already applied by the projections that write as they go.
public final class LogBatch {
    /// The write transaction: for reading projection state while validating.
    public let transaction: WriteTransaction
    /// The last position in the log, including this batch's appends.
    public private(set) var head: Position
    /// The first position this batch appended, if any.
    public private(set) var firstAppended: Position?
    /// Payload bytes appended by this batch.
    private(set) var appendedBytes = 0
    private var link: ChainLink
    let databases: LogDatabases
    /// The first position this batch redacted, if any: snapshots from it on
    /// hold views built from payloads now gone, and are removed.
    var redactedFrom: Position?
    /// Finds what authorizes a redacted record (read lazily).
    lazy var redactions = RedactionLookup(databases)
    private let applier: ProjectionApplier
    /// The write's time: what an event appended without its own
    /// (``NewEvent/at``) records. Decided once for the write, when it was
    /// handed over (``WriteOptions/time``, else ``StoreOptions/clock``), so
    /// a command that needs "now" reads it here and decides as the record
    /// will say.
    public let time: Date

    /// A batch that appends after `head`, the log's last record as the
    /// transaction sees it (read once per transaction by the caller).
    init(transaction: WriteTransaction, databases: LogDatabases, projections: [any Projection],
         head recorded: RecordedHead, time: Date) throws {
        self.transaction = transaction
        self.databases = databases
        self.time = time
        (head, link) = (recorded.position, recorded.link)
        let log = databases.logReader(in: transaction)
        applier = try ProjectionApplier(projections, in: transaction, log: log)
    }

    /// The positions appended by this batch.
    public var appended: ClosedRange<Position>? { firstAppended.map { $0...head } }

    /// The log's last record, this batch's appends included.
    var recordedHead: RecordedHead { RecordedHead(position: head, link: link) }

    /// Appends one event at the next position (`mdb_put` with `MDB_APPEND`)
    /// and applies it to every projection.
    ///
    /// Types that begin with `eventlog.` are the engine's own (such as
    /// ``RedactionRecord/type``, written only by ``redact(_:context:at:)``)
    /// and are refused: an application's event of such a type would claim
    /// what only the engine may record.
    ///
    /// Every projection reads the event from its payload, as a rebuild
    /// does: what the views hold depends on the log alone.
    @discardableResult
    public func append(_ event: NewEvent) throws -> RecordedEvent {
        guard !event.type.hasPrefix(Self.engineTypePrefix) else {
            throw EventLogError(.invalidArgument, operation: "append",
                                "event type \"\(event.type)\" begins with \"\(Self.engineTypePrefix)\", which is reserved for the engine's own records; allowed: any other type of 1 to \(RecordLayout.maxTypeLength) UTF-8 bytes")
        }
        return try appendEvent(event)
    }

    /// The prefix of the engine's own event types.
    public static let engineTypePrefix = "eventlog."

    /// ``append(_:)`` without the reserved-type check: the engine's own records.
    func appendEvent(_ event: NewEvent) throws -> RecordedEvent {
        let typeLength = event.type.utf8.count
        guard typeLength > 0, typeLength <= RecordLayout.maxTypeLength else {
            throw EventLogError(.invalidArgument, operation: "append",
                                "event type \"\(event.type)\" is \(typeLength) UTF-8 bytes; allowed: 1 to \(RecordLayout.maxTypeLength)")
        }
        guard event.payload.count < Int(UInt32.max) else {
            throw EventLogError(.invalidArgument, operation: "append", "payload of \(event.payload.count) bytes exceeds 4 GiB")
        }
        let position = head + 1
        let micros = (event.at ?? time).microsecondsSince1970
        // The engine's own records stay uncompressed (a reader finds a redaction without a dictionary).
        let stored = event.type.hasPrefix(Self.engineTypePrefix) ? nil : try databases.dictionaries.compressed(event.payload)
        let size = RecordLayout.size(typeLength: typeLength, payloadLength: stored?.count ?? event.payload.count)
        let previous = link
        var newLink = ChainLink.zero
        var type = event.type
        try type.withUTF8 { typeBytes in
            try event.payload.withUnsafeBytes { payload in
                try databases.log.put(reserving: size, forKey: position, flags: .append, in: transaction) { out in
                    if let stored {
                        stored.withUnsafeBytes { stored in
                            newLink = RecordLayout.encode(
                                into: out, position: position, type: UnsafeRawBufferPointer(typeBytes), schemaVersion: event.schemaVersion,
                                micros: micros, payload: payload, stored: stored, previousLink: previous)
                        }
                    } else {
                        newLink = RecordLayout.encode(
                            into: out, position: position, type: UnsafeRawBufferPointer(typeBytes),
                            schemaVersion: event.schemaVersion, micros: micros, payload: payload, previousLink: previous)
                    }
                }
            }
        }
        head = position
        link = newLink
        appendedBytes += event.payload.count
        if firstAppended == nil { firstAppended = position }
        let recorded = RecordedEvent(
            position: position, type: type, schemaVersion: event.schemaVersion,
            appendedAt: Date(microsecondsSince1970: micros), appendedAtMicroseconds: micros,
            payload: event.payload, isRedacted: false)
        try applier.apply(recorded)
        return recorded
    }

    /// Appends a record exactly as another store encoded it (a follower, a
    /// restore): the bytes are stored unchanged and the event is applied to
    /// every projection, as ``append(_:)`` does. The record must be the next
    /// position and its link must follow the head's: else nothing of the
    /// write is kept and the error names the position.
    ///
    /// Redaction travels with the records (`Docs/Scaling.md`, "Erasure"): a
    /// redacted record is taken only when a pending authorization covers it
    /// (``authorize(pending:)``), and an `eventlog.redaction` record redacts
    /// the earlier records it names in this transaction, as
    /// ``redact(_:context:at:)`` did on the leader, so the log ends byte for
    /// byte the leader's.
    public func append(record: LogRecord) throws {
        guard record.position == head + 1 else {
            throw EventLogError(.diverged, operation: "append record",
                                "record \(record.position) does not follow this log's head \(head); allowed: position \(head + 1)",
                                position: record.position)
        }
        try record.validate(using: databases.dictionaries, in: transaction)
        guard record.link(after: link) == record.link else {
            throw EventLogError(.diverged, operation: "append record",
                                "the link of record \(record.position) does not follow this log's record \(head): the histories differ",
                                position: record.position)
        }
        let arrival = try checkRedaction(arriving: record)
        try record.bytes.withUnsafeBytes { bytes in
            try databases.log.put(reserving: bytes.count, forKey: record.position, flags: .append, in: transaction) { out in
                out.copyMemory(from: bytes)
            }
        }
        head = record.position
        link = record.link
        appendedBytes += record.bytes.count
        if firstAppended == nil { firstAppended = record.position }
        var event = try record.view { try databases.dictionaries.event(of: $0, at: record.position, in: transaction) }
        if let authorization = arrival.authorization {
            event.redactedBy = authorization.position
            event.redactionRecord = authorization.record
        }
        try applier.apply(event)
        if let names = arrival.names { try redactNamed(names, by: record.position) }
    }

    /// Lets every projection write what it held back; called once, before commit.
    func finish() throws {
        try applier.finish()
    }
}
