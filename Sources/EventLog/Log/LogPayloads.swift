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
    /// Decompresses the payloads stored compressed.
    let dictionaries: LogDictionaries
    /// The environment the handle belongs to: a database handle is a number
    /// that names another database (or none) in another environment, so a
    /// read in another's transaction is refused, never answered.
    private let environment: ObjectIdentifier

    init(_ log: Database<Position, [UInt8]>, dictionaries: LogDictionaries, in environment: Environment) {
        self.log = log
        self.dictionaries = dictionaries
        self.environment = ObjectIdentifier(environment)
    }

    /// The log of the environment `txn` belongs to (`mdb_dbi_open` of `log`,
    /// without `MDB_CREATE`); nil when it has none.
    public init?(openingIn txn: ReadTransaction) throws {
        do {
            log = try txn.openDatabase("log")
        } catch LMDBError.notFound {
            return nil
        }
        environment = ObjectIdentifier(txn.environment)
        dictionaries = LogDictionaries.of(txn.environment)
    }

    /// Calls `body` with the payload of the record at `position`: in the
    /// map (no copy; valid only inside `body`), or decompressed when it is
    /// stored compressed. Nil when there is no record at `position` or its
    /// payload was redacted; a record too short for its own lengths, or a
    /// compressed payload that does not decompress, is reported as a
    /// corrupt store.
    public func withPayload<R>(at position: Position, in txn: ReadTransaction,
                               _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard ObjectIdentifier(txn.environment) == environment else {
            throw EventLogError(.invalidArgument, operation: "read payload",
                                "the log's payloads were read in a transaction of another environment (\(txn.environment.path)); "
                                    + "read them in a transaction of the log's")
        }
        let found: R?? = try log.withValue(forKey: position, in: txn) { bytes -> R? in
            let view = RecordLayout.View(bytes: bytes)
            guard view.isWellFormed else {
                throw EventLogError(.corrupt, operation: "read payload", "the record's lengths do not match its \(bytes.count) bytes",
                                    position: position)
            }
            guard !view.isRedacted else { return nil }
            return try dictionaries.withPayload(of: view, at: position, in: txn, body)
        }
        return found ?? nil
    }

    /// Calls `body` with bytes `range` of the payload of the record at
    /// `position`, decompressing only the blocks of a compressed payload
    /// that hold them (``CompressedPayload``): how a view that refers to a
    /// part of an event (an item of a batch) reads it. Nil as
    /// ``withPayload(at:in:_:)``; a range past the payload's end throws.
    public func withPayloadBytes<R>(at position: Position, _ range: Range<Int>, in txn: ReadTransaction,
                                    _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard ObjectIdentifier(txn.environment) == environment else {
            throw EventLogError(.invalidArgument, operation: "read payload",
                                "the log's payloads were read in a transaction of another environment (\(txn.environment.path)); "
                                    + "read them in a transaction of the log's")
        }
        let found: R?? = try log.withValue(forKey: position, in: txn) { bytes -> R? in
            let view = RecordLayout.View(bytes: bytes)
            guard view.isWellFormed else {
                throw EventLogError(.corrupt, operation: "read payload", "the record's lengths do not match its \(bytes.count) bytes",
                                    position: position)
            }
            guard !view.isRedacted else { return nil }
            return try dictionaries.withPayloadBytes(of: view, range, at: position, in: txn, body)
        }
        return found ?? nil
    }

    /// The append time (microseconds since 1970) of the record at
    /// `position`, from its header: for a view that reads an event's time
    /// from the log rather than keeping a copy. Nil when there is no record
    /// there; a redacted record keeps its time.
    public func appendedAtMicros(at position: Position, in txn: ReadTransaction) throws -> Int64? {
        guard ObjectIdentifier(txn.environment) == environment else {
            throw EventLogError(.invalidArgument, operation: "read record time",
                                "the log was read in a transaction of another environment (\(txn.environment.path)); "
                                    + "read it in a transaction of the log's")
        }
        return try log.withValue(forKey: position, in: txn) { bytes -> Int64 in
            let view = RecordLayout.View(bytes: bytes)
            guard view.isWellFormed else {
                throw EventLogError(.corrupt, operation: "read record time", "the record's lengths do not match its \(bytes.count) bytes",
                                    position: position)
            }
            return view.micros
        }
    }
}

/// A log's payloads and the transaction to read them in: what the engine
/// hands a projection writer (``Projection/makeWriter(in:log:)``).
///
/// ```swift
/// let text = try log.withPayload(at: position) { payload in String(decoding: payload, as: UTF8.self) }
/// ```
///
/// The indexer's writers live through a transaction of the index
/// environment in which it reads the log in several short transactions
/// (each one begun after the events it applies were read, so that it sees
/// them): their reader's ``transaction`` is whichever is current
/// (``LogTransactionSlot``).
public struct LogReader {
    public let payloads: LogPayloads
    private let slot: LogTransactionSlot

    public init(payloads: LogPayloads, transaction: ReadTransaction) {
        self.payloads = payloads
        slot = LogTransactionSlot(transaction)
    }

    init(payloads: LogPayloads, slot: LogTransactionSlot) {
        self.payloads = payloads
        self.slot = slot
    }

    /// The read transaction of the log to read in.
    public var transaction: ReadTransaction { slot.current }

    /// ``LogPayloads/withPayload(at:in:_:)`` in ``transaction``.
    public func withPayload<R>(at position: Position, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try payloads.withPayload(at: position, in: transaction, body)
    }

    /// ``LogPayloads/withPayloadBytes(at:_:in:_:)`` in ``transaction``.
    public func withPayloadBytes<R>(at position: Position, _ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try payloads.withPayloadBytes(at: position, range, in: transaction, body)
    }
}

/// The log transaction a ``LogReader`` reads in, which the indexer moves
/// on between the pieces it applies. Used on one thread at a time.
final class LogTransactionSlot {
    private var transaction: ReadTransaction?

    init(_ transaction: ReadTransaction? = nil) {
        self.transaction = transaction
    }

    var current: ReadTransaction {
        guard let transaction else {
            preconditionFailure("a LogReader of the indexer was used outside the log transaction it reads in")
        }
        return transaction
    }

    /// Runs `body` with `transaction` as the current one.
    func with<R>(_ transaction: ReadTransaction, _ body: () throws -> R) rethrows -> R {
        let previous = self.transaction
        self.transaction = transaction
        defer { self.transaction = previous }
        return try body()
    }
}
