import LMDB

/// The `meta` database of either environment of a store: the log's
/// (`format`, `head`, the command views' checkpoints, …) or the index's
/// (`format`, `applied`, the index projections' checkpoints). Both keep the
/// format and the checkpoints the same way, and a head as position ‖ link
/// (`Docs/LogFormat.md`). A value of the wrong length is a corrupt store,
/// reported with its key, never read as absent.
///
/// ```swift
/// let meta = MetaDatabase(database: databases.meta, environment: .index)
/// try meta.checkFormat(in: txn, path: "/srv/events/index")   // throws incompatibleFormat for another format
/// let applied = try meta.head("applied", in: txn)             // RecordedHead?
/// ```
struct MetaDatabase: Sendable {
    let database: Database<String, [UInt8]>
    let environment: EnvironmentDirectory.Role

    private var formats: Database<String, StoreFormat> { database.reinterpreted() }
    private var heads: Database<String, RecordedHead> { database.reinterpreted() }

    /// The projections' checkpoints (`checkpoint:NAME`).
    var checkpoints: CheckpointTable { CheckpointTable(meta: database) }

    /// What errors call this database.
    private var label: String { environment == .log ? (database.name ?? "main") : "index meta" }

    /// `db.get(key)`, with a value that does not decode reported as a corrupt store naming `key`.
    func value<V>(_ db: Database<String, V>, _ key: String, in txn: ReadTransaction) throws -> V? {
        do {
            return try db.get(key, in: txn)
        } catch let error as LMDBDecodingError {
            throw EventLogError.corrupt(key: key, database: label, operation: "read", error.description)
        }
    }

    func format(in txn: ReadTransaction) throws -> StoreFormat? {
        try value(formats, "format", in: txn)
    }

    func setFormat(_ format: StoreFormat, in txn: WriteTransaction) throws {
        try formats.put(format, forKey: "format", in: txn)
    }

    /// The format this version writes in this environment: the log's
    /// records and metadata (``StoreFormat/current``), or the index's
    /// (``StoreFormat/index``), which holds no records.
    var writtenFormat: StoreFormat { environment == .log ? .current : .index }

    /// The stored format, after checking that this version reads it; nil
    /// in an environment that has none yet. A log of an older readable
    /// format opens (``StoreFormat/readable``); an index reads only its
    /// own. `path` is the environment's directory, for the message.
    @discardableResult
    func checkFormat(in txn: ReadTransaction, path: String, operation: String = "open") throws -> StoreFormat? {
        guard let stored = try format(in: txn) else { return nil }
        let readable = environment == .log ? StoreFormat.readable : writtenFormat.version...writtenFormat.version
        guard readable.contains(stored.version) else {
            throw EventLogError(.incompatibleFormat, operation: operation,
                                "\(environment == .log ? "the store" : "the index") at \(path) has format \(stored.version); "
                                    + "this version reads "
                                    + (readable.count == 1 ? "format \(readable.lowerBound)" : "formats \(readable.lowerBound) to \(readable.upperBound)"))
        }
        return stored
    }

    /// The head recorded under `key` (the log's `head`, the index's `applied`).
    func head(_ key: String, in txn: ReadTransaction) throws -> RecordedHead? {
        try value(heads, key, in: txn)
    }

    func setHead(_ head: RecordedHead, forKey key: String, in txn: WriteTransaction) throws {
        try heads.put(head, forKey: key, in: txn)
    }
}
