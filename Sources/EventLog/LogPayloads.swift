import LMDB

/// The payloads of a store's log, read in place: for a view that refers to
/// an event's bytes instead of copying them (the item store keeps where an
/// item's bytes are in its event, not the item; `Docs/Architecture.md`,
/// "Text kept once").
///
/// ```swift
/// let log = try LogPayloads(openingIn: txn)        // nil in a scratch environment, which has no log
/// let title = try log?.withPayload(at: 42, in: txn) { payload in try decode(payload) }
/// ```
///
/// A rebuild writes views in a scratch environment that has no log: there
/// ``LogPayloads/init(openingIn:)`` gives nil, and a projection writer reads
/// the log it applies through the ``LogReader`` the engine hands it
/// (``Projection/makeWriter(in:log:)``), which is the live store's.
public struct LogPayloads: Sendable {
    let log: Database<Position, [UInt8]>

    init(_ log: Database<Position, [UInt8]>) {
        self.log = log
    }

    /// The log of the environment `txn` belongs to (`mdb_dbi_open` of `log`,
    /// without `MDB_CREATE`); nil when it has none.
    public init?(openingIn txn: ReadTransaction) throws {
        do {
            log = try txn.openDatabase("log")
        } catch LMDBError.notFound {
            return nil
        }
    }

    /// Calls `body` with the payload of the record at `position`, in the
    /// map (no copy; valid only inside `body`). Nil when there is no record
    /// at `position` or its payload was redacted; a record too short for its
    /// own lengths is reported as a corrupt store.
    public func withPayload<R>(at position: Position, in txn: ReadTransaction,
                               _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let found: R?? = try log.withValue(forKey: position, in: txn) { bytes -> R? in
            let view = RecordLayout.View(bytes: bytes)
            guard view.isWellFormed else {
                throw EventLogError(.corrupt, operation: "read payload", "the record's lengths do not match its \(bytes.count) bytes",
                                    position: position)
            }
            guard !view.isRedacted else { return nil }
            return try body(view.payload)
        }
        return found ?? nil
    }
}

/// A log's payloads and the transaction to read them in: what the engine
/// hands a projection writer (``Projection/makeWriter(in:log:)``).
///
/// ```swift
/// let text = try log.withPayload(at: position) { payload in String(decoding: payload, as: UTF8.self) }
/// ```
public struct LogReader {
    public let payloads: LogPayloads
    public let transaction: ReadTransaction

    public init(payloads: LogPayloads, transaction: ReadTransaction) {
        self.payloads = payloads
        self.transaction = transaction
    }

    /// ``LogPayloads/withPayload(at:in:_:)`` in ``transaction``.
    public func withPayload<R>(at position: Position, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try payloads.withPayload(at: position, in: transaction, body)
    }
}
