import LMDB

/// The engine's own named databases, beside the projections' ones.
///
/// - `log`: position (8 bytes big-endian) → record (see ``RecordLayout``).
/// - `meta`: `format` → ``StoreFormat``; `head` → ``RecordedHead`` (so that a
///   truncated log is detected); `checkpoint:NAME` → ``Checkpoint`` of
///   projection NAME.
/// - `idempotency`: key → ``IdempotencyEntry``.
///
/// A meta value of the wrong length is a corrupt store, reported with its
/// key, never read as absent.
/// - `redactions`: last position of a redacted range → its first position
///   and the position of the ``RedactionRecord`` that redacted it (see
///   `LogBatch+Redaction.swift`).
/// - `dictionaries`: id (4 bytes big-endian) → a zstd dictionary that
///   compressed payloads name (``LogDictionaries``); absent in a store of
///   format 1 opened read-only.
struct LogDatabases: Sendable {
    static let names = ["log", "meta", "idempotency", "redactions", LogDictionaries.databaseName]
    let log: Database<UInt64, [UInt8]>
    let meta: Database<String, [UInt8]>
    let idempotency: Database<String, IdempotencyEntry>
    let redactions: Database<UInt64, [UInt8]>
    /// The environment's dictionaries, prepared once read.
    let dictionaries: LogDictionaries
    /// The `dictionaries` database; nil in a read-only store that has none.
    let dictionaryTable: Database<[UInt8], [UInt8]>?

    init(openingIn txn: WriteTransaction) throws {
        log = try txn.createDatabase("log")
        meta = try txn.createDatabase("meta")
        idempotency = try txn.createDatabase("idempotency")
        redactions = try txn.createDatabase("redactions")
        dictionaries = LogDictionaries.of(txn.environment)
        do {
            let table: Database<[UInt8], [UInt8]> = try txn.createDatabase(LogDictionaries.databaseName)
            dictionaries.adopt(table)
            dictionaryTable = table
        } catch LMDBError.notFound {
            dictionaryTable = nil
        }
    }

    /// The log's payloads, read in `txn` (what projection writers are handed).
    func logReader(in txn: ReadTransaction) -> LogReader {
        LogReader(payloads: LogPayloads(log, dictionaries: dictionaries, in: txn.environment), transaction: txn)
    }

    /// Makes the newest dictionary in `dictionaries` the one this process
    /// compresses new records with.
    func noteNewestDictionary(in txn: ReadTransaction) throws {
        guard let table = dictionaryTable, let last = try table.cursor(in: txn).lastBytes() else { return }
        guard last.key.count == 4 else {
            throw EventLogError.corrupt(key: "\(last.key.count) bytes", database: LogDictionaries.databaseName, operation: "open",
                                        "a dictionary's key is its id, 4 bytes")
        }
        let id = UInt32(bigEndian: last.key.loadUnaligned(as: UInt32.self))
        dictionaries.noteNewest(try dictionaries.dictionary(id, in: txn, position: 0))
    }

    /// The event the record `view` at `position` holds, its payload
    /// decompressed when stored compressed.
    func event(_ view: RecordLayout.View, at position: Position, in txn: ReadTransaction) throws -> RecordedEvent {
        try dictionaries.event(of: view, at: position, in: txn)
    }

    /// `meta`, read and written as the log environment's (format, head, checkpoints).
    var metadata: MetaDatabase { MetaDatabase(database: meta, environment: .log) }
    /// The command views' checkpoints.
    var checkpoints: CheckpointTable { metadata.checkpoints }

    /// The last position and its link (zero and the zero link when empty).
    func head(in txn: ReadTransaction) throws -> RecordedHead {
        let cursor = try log.cursor(in: txn)
        guard let last = try cursor.lastBytes() else { return RecordedHead(position: 0, link: .zero) }
        let position = try UInt64.decode(lmdbBytes: last.key)
        let view = RecordLayout.View(bytes: last.value)
        guard view.bytes.count >= RecordLayout.headerSize else {
            throw EventLogError(.corrupt, operation: "read head", "the last record is \(view.bytes.count) bytes, shorter than a header", position: position)
        }
        return RecordedHead(position: position, link: view.link)
    }

    func checkpoint(of name: String, in txn: ReadTransaction) throws -> Checkpoint? {
        try checkpoints.checkpoint(of: name, in: txn)
    }

    func setCheckpoint(_ checkpoint: Checkpoint, of name: String, in txn: WriteTransaction) throws {
        try checkpoints.set(checkpoint, of: name, in: txn)
    }

    /// Moves the checkpoint of each of `projections` to `position`, stamped
    /// with its version.
    func setCheckpoints(of projections: [any Projection], to position: Position, in txn: WriteTransaction) throws {
        try checkpoints.set(projections, to: position, in: txn)
    }

    /// The head the last appending commit recorded; nil in a store that never appended.
    func recordedHead(in txn: ReadTransaction) throws -> RecordedHead? {
        try metadata.head("head", in: txn)
    }

    func setRecordedHead(_ head: RecordedHead, in txn: WriteTransaction) throws {
        try metadata.setHead(head, forKey: "head", in: txn)
    }

    /// The write an idempotency key names, if any.
    func idempotencyEntry(_ key: String, in txn: ReadTransaction) throws -> IdempotencyEntry? {
        do {
            return try idempotency.get(key, in: txn)
        } catch let error as LMDBDecodingError {
            throw EventLogError.corrupt(key: key, database: "idempotency", operation: "read", error.description)
        }
    }

    /// Calls `body` with each event after `position` through `end` as `txn`
    /// sees the log, and its record's link, until it returns false; throws
    /// on a gap or a malformed record, since every caller relies on a
    /// whole, ordered log.
    func forEachRecord(after position: Position, through end: Position, in txn: ReadTransaction,
                       _ body: (RecordedEvent, ChainLink) throws -> Bool) throws {
        guard position < end else { return }
        let redactions = RedactionLookup(self)
        var walk = try LogWalk(self, from: position + 1, in: txn)
        while let (p, value) = try walk.next() {
            let view = RecordLayout.View(bytes: value)
            guard view.isWellFormed else {
                throw EventLogError(.corrupt, operation: "read", "the record is malformed", position: p)
            }
            let event = try self.event(view, at: p, in: txn)
            let described = view.isRedacted ? try redactions.describe(event, in: txn) : event
            if !(try body(described, view.link)) || p == end { return }
        }
        try walk.checkReached(end)
    }

    /// The link of the record at `position` (``ChainLink/zero`` at 0); nil
    /// past the head.
    func link(at position: Position, in txn: ReadTransaction) throws -> ChainLink? {
        guard position > 0 else { return .zero }
        return try log.withValue(forKey: position, in: txn) { bytes in
            let view = RecordLayout.View(bytes: bytes)
            guard view.isWellFormed else {
                throw EventLogError(.corrupt, operation: "read", "the record is malformed", position: position)
            }
            return view.link
        }
    }
}
