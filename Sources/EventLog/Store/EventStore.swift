import Foundation
import LMDB
import Logging

/// An append-only event log in LMDB with the projections built from it.
///
/// Every write goes one way: the caller's closure validates against the
/// views and appends events; each event is applied to every projection; the
/// projections' checkpoints move to the new head; all of it commits in one
/// LMDB transaction, or none of it does.
///
/// ```swift
/// let store = try EventStore<Views>(path: "/var/lib/app/events")
/// let receipt = try store.write(WriteOptions(idempotencyKey: "req-17")) { batch in
///     try batch.append(NewEvent(type: "order.placed", schemaVersion: 1, payload: bytes))
/// }
/// print(receipt.positions!)            // 1...1, or the first attempt's on a retry
/// let report = try store.verify()      // checksums and hash chain
/// ```
///
/// Thread-safe: writes from many threads are serialized and, when they
/// arrive together, share one transaction (group commit). Several processes
/// may open the same store; LMDB's writer lock orders their appends.
///
/// Async: `try await store.write { batch in … }` queues the write in the
/// group commit and suspends the task until the writer thread has committed
/// it (no thread waits for its fsync, so writes from any number of tasks
/// meet in the queue and share commits; once submitted, a write is not
/// cancelled); `try await store.read { txn in … }` runs the read on
/// ``BlockingWork``'s queue, off the cooperative threads.
public final class EventStore<Views: ProjectionSet>: Sendable {
    public let environment: Environment
    /// The projections, opened in ``environment``.
    public let views: Views
    /// The index: the views of `Views.Index`, applied behind the log by the
    /// indexer in an environment of their own (``StoreIndex``). Nil when
    /// the views have none, or (opened read-only) when the store has none yet.
    public let index: StoreIndex<Views.Index>?
    /// Why the index cannot be used, in a store opened read-only whose
    /// index is damaged or unreadable (``index`` is nil): what searches throw.
    public let indexUnavailable: EventLogError?
    /// The index's history when the store opened (``indexHistory()``
    /// reads it again while the index is open).
    let indexHistoryAtOpen: DerivedHistory?
    public let options: StoreOptions
    let databases: LogDatabases
    /// The writer thread and the queue of writes waiting for it.
    let groupCommit: GroupCommit
    let snapshotInProgress = SingleFlight()
    /// At most one dictionary trained at a time (``trainDictionaryIfDue()``).
    let dictionaryTraining = SingleFlight()
    /// Wakes subscriptions and the indexer when a write of this store commits.
    let commits: CommitSignal
    /// Applies the index behind the log, in a store opened for writing.
    let indexer: Indexer?
    /// The writes started and not finished, which ``close()`` waits for.
    let writes = WritesInFlight()
    /// What the store reports through swift-metrics (``StoreMetrics``).
    public let metrics: StoreMetrics

    /// The format of records and metadata this version writes and reads.
    public static var formatVersion: UInt32 { StoreFormat.current.version }

    /// Opens the store in directory `path`, creating it unless
    /// ``StoreOptions/createIfMissing`` is false, and brings every projection
    /// up to the head of the log (rebuilding one whose version changed).
    ///
    /// With ``StoreOptions/readOnly`` it writes nothing and waits for no
    /// writer: no catch-up, no rebuild, read transactions only (see
    /// ``StoreOptions/readOnly``); a read then reports views that lag the
    /// log (``viewStatus()``) instead of answering from them as current.
    public init(path: String, options: StoreOptions = StoreOptions()) throws {
        var options = options
        // Every line the store logs names it.
        options.logger[metadataKey: "store"] = "\(path)"
        guard options.indexReadAhead >= 0 else {
            throw EventLogError(.invalidArgument, operation: "open",
                                "indexReadAhead is \(options.indexReadAhead); it must be 0 (no read-ahead) or more bytes")
        }
        guard options.indexDurability != .noSync else {
            throw EventLogError(.invalidArgument, operation: "open",
                                "indexDurability is noSync; allowed: durable or noMetaSync (a machine crash can damage an environment written without syncs, silently)")
        }
        let directory = EnvironmentDirectory.log(path)
        if (options.readOnly || !options.createIfMissing), try !directory.holdsData() { throw directory.missing(operation: "open") }
        // A writer creates files (index/, snapshots/, lock files) that the store's owner must be able to use.
        if !options.readOnly { try directory.refuseForeignWriter() }
        metrics = StoreMetrics(path: path)
        environment = try directory.open(options: options.environmentOptions(metrics: metrics))
        self.options = options
        groupCommit = GroupCommit(maxGroup: options.maxGroupCommit)
        commits = CommitSignal()
        if options.readOnly {
            (databases, views) = try Self.openForReading(environment, path: path)
            (index, indexUnavailable, indexHistoryAtOpen) = try Self.openIndexForReading(views: views, log: environment, databases: databases,
                                                                                           options: options)
            indexer = nil
            return
        }
        // Never add the log's databases to another program's environment.
        try directory.refuseForeign(environment)
        (databases, views) = try environment.write { txn in
            let databases = try LogDatabases(openingIn: txn)
            if try databases.metadata.checkFormat(in: txn, path: path) != .current {
                try databases.metadata.setFormat(.current, in: txn)
            }
            try databases.noteNewestDictionary(in: txn)
            return (databases, try Views(openingIn: txn))
        }
        // A log behind a snapshot has lost records: nothing is written over positions it has seen.
        try Self.refuseSnapshotsAheadOfLog(environment, databases: databases)
        index = try Self.openIndex(views: views, log: environment, databases: databases, options: options)
        indexUnavailable = nil
        indexHistoryAtOpen = nil
        indexer = try Self.makeIndexer(index, log: environment, databases: databases, commits: commits, options: options, metrics: metrics)
        let writer = LogWriter(environment: environment, databases: databases, projections: views.all, options: options,
                               metrics: metrics, commits: commits, indexer: indexer, writes: writes)
        try writer.catchUp()
        try dropIndexLeftInLog()
        try indexer?.start()
        try groupCommit.start(writer)
    }

    /// Stops the writer thread, and the indexer after the transaction it is
    /// writing commits (what it has not applied, the next open's indexer
    /// applies).
    deinit {
        groupCommit.stop()
        indexer?.stop()
    }

    /// Opens the engine's and the projections' databases in a read
    /// transaction (``Environment/openDatabases(_:)``): nothing is created.
    private static func openForReading(_ environment: Environment, path: String) throws -> (LogDatabases, Views) {
        try environment.openDatabases { txn in
            let databases: LogDatabases
            do {
                databases = try LogDatabases(openingIn: txn)
            } catch LMDBError.notFound {
                throw EnvironmentDirectory.log(path).foreign(databases: try txn.databaseNames())
            }
            try databases.metadata.checkFormat(in: txn, path: path)
            do {
                return (databases, try Views(openingIn: txn))
            } catch let error as LMDBError where error == .notFound {
                throw EventLogError(.viewsStale, operation: "open",
                                    "the store has no database that these projections open (\(error.call)): its views were built by other projections; "
                                        + "`replay` with this version rebuilds them (the log itself can be read with a build that matches)")
            }
        }
    }

    // MARK: Writing

    /// Runs `body` in the store's write path and commits what it appended.
    ///
    /// `body` may run more than once (when the map grows), so it must act
    /// only through `batch`. When it throws, nothing it did is written. It
    /// runs on the store's writer thread while this one waits.
    @discardableResult
    public func write<R>(_ options: WriteOptions = WriteOptions(), _ body: (LogBatch) throws -> R) throws -> WriteReceipt<R> {
        try checkWritable(options)
        try writes.enter()
        defer { writes.leave() }
        let receipt = try withoutActuallyEscaping(body) { body in
            try groupCommit.handOver(WriteRequest(options, clock: self.options.clock, body))
        }
        return afterCommit(receipt)
    }

    /// ``write(_:_:)-(_,(LogBatch)->R)``, with the task suspended (no
    /// thread held) until the write is committed or fails.
    @discardableResult
    public func write<R: Sendable>(_ options: WriteOptions = WriteOptions(),
                                   _ body: @escaping @Sendable (LogBatch) throws -> R) async throws -> WriteReceipt<R> {
        try checkWritable(options)
        try writes.enter()
        defer { writes.leave() }
        return afterCommit(try await groupCommit.handOver(WriteRequest(options, clock: self.options.clock, body)))
    }

    /// What a write checks before it is handed over.
    func checkWritable(_ options: WriteOptions) throws {
        guard !self.options.readOnly else {
            throw EventLogError(.invalidArgument, operation: "append",
                                "the store at \(environment.path) was opened read-only (StoreOptions.readOnly); open it for writing to append")
        }
        if let key = options.idempotencyKey {
            let length = key.utf8.count
            guard length > 0, length <= 256 else {
                throw EventLogError(.invalidArgument, operation: "append",
                                    "idempotency key is \(length) UTF-8 bytes; allowed: 1 to 256")
            }
        }
    }

    /// What follows a committed write on its caller's side, before it
    /// returns: snapshots built from redacted payloads that appeared during
    /// the write go (into `removedSnapshots`), and an automatic snapshot
    /// may start. (Subscriptions and the indexer heard of the write on the
    /// writer thread, ``LogWriter/commit(_:)``.)
    func afterCommit<R>(_ receipt: WriteReceipt<R>) -> WriteReceipt<R> {
        var receipt = receipt
        if let from = receipt.redactedFrom {
            let late = (try? RedactedSnapshots.remove(from: from, in: snapshotDirectory, throwing: false)) ?? []
            receipt.removedSnapshots = Array(Set(receipt.removedSnapshots + late)).sorted()
        }
        snapshotIfDue(appended: receipt.isRetry ? nil : receipt.positions)
        if receipt.positions != nil && !receipt.isRetry { trainDictionaryIfDue() }
        return receipt
    }

    /// How many transactions the group commit wrote since the store opened,
    /// and how many writes they carried.
    public var groupCommitStatistics: GroupCommitStatistics { groupCommit.counts }

    /// Appends `events` as one batch.
    @discardableResult
    public func append(_ events: [NewEvent], _ options: WriteOptions = WriteOptions()) throws -> WriteReceipt<Void> {
        try write(options) { batch in
            for event in events { try batch.append(event) }
        }
    }

    /// ``append(_:_:)``, with the task suspended until it is committed.
    @discardableResult
    public func append(_ events: [NewEvent], _ options: WriteOptions = WriteOptions()) async throws -> WriteReceipt<Void> {
        try await write(options) { batch in
            for event in events { try batch.append(event) }
        }
    }

    /// A pipeline of writes into this store: see ``WritePipeline``.
    ///
    /// ```swift
    /// let pipeline = store.pipeline(depth: 4)
    /// try pipeline.submit { batch in try batch.append(event) }
    /// try pipeline.waitForAll()
    /// ```
    public func pipeline(depth: Int = 4) -> WritePipeline<Views> {
        WritePipeline(store: self, depth: depth)
    }

    // MARK: Reading

    /// Runs `body` in a read transaction: a consistent view of the log and
    /// every projection as of one commit.
    ///
    /// In a store opened with ``StoreOptions/readOnly``, the views are
    /// checked first, in the same transaction: views built by another
    /// projection version throw ``EventLogError/Code/viewsStale``, and so do
    /// views that lag the log unless ``StoreOptions/servesLaggingViews``.
    /// (A store opened for writing caught its views up on open.) The log
    /// alone (``head()``, ``events(from:limit:)``, ``verify(payloadCheck:progress:)``)
    /// is always read.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try environment.read { txn in
            if options.readOnly { try checkViews(in: txn) }
            return try body(txn)
        }
    }

    /// ``read(_:)``, off the cooperative threads (``BlockingWork``).
    public func read<R: Sendable>(_ body: @escaping @Sendable (ReadTransaction) throws -> R) async throws -> R {
        try await BlockingWork.run { try self.read(body) }
    }

    /// The last position in the log; 0 when it is empty.
    public func head() throws -> Position {
        try environment.read { try databases.head(in: $0).position }
    }

    /// The log's payloads as `txn` sees them, for a projection writer that
    /// applies this store's events in another environment
    /// (``Projection/makeWriter(in:log:)``).
    public func logReader(in txn: ReadTransaction) -> LogReader {
        databases.logReader(in: txn)
    }

    /// The last position in the log as `txn` sees it.
    public func head(in txn: ReadTransaction) throws -> Position {
        try databases.head(in: txn).position
    }

    /// The event at `position`, or nil past the head.
    public func event(at position: Position) throws -> RecordedEvent? {
        try environment.read { txn in try event(at: position, in: txn) }
    }

    /// The event at `position` as `txn` sees the log.
    public func event(at position: Position, in txn: ReadTransaction) throws -> RecordedEvent? {
        try databases.log.withValue(forKey: position, in: txn) { bytes in
            let view = RecordLayout.View(bytes: bytes)
            guard view.isWellFormed else {
                throw EventLogError(.corrupt, operation: "read", "the record is malformed", position: position)
            }
            return try RedactionLookup(databases).describe(databases.event(view, at: position, in: txn), in: txn)
        }
    }

    /// Up to `limit` events from `position` on, in order, from one read transaction.
    public func events(from position: Position = 1, limit: Int = .max) throws -> [RecordedEvent] {
        var result: [RecordedEvent] = []
        try forEachEvent(from: position) { event in
            result.append(event)
            return result.count < limit
        }
        return result
    }

    /// Calls `body` with each event from `position` through `through` (the
    /// head when nil), in order, until it returns false. The log is read in
    /// chunks of short read transactions; the end is fixed when the call
    /// starts, so events appended meanwhile are not included.
    /// - Returns: the last position passed to `body`.
    @discardableResult
    public func forEachEvent(from position: Position = 1, through: Position? = nil, chunk: Int = 4096,
                             _ body: (RecordedEvent) throws -> Bool) throws -> Position {
        let end = try through ?? head()
        var last = max(position, 1) - 1
        var keepGoing = true
        while keepGoing && last < end {
            let before = last
            try environment.read { txn in
                var count = 0
                try forEachRecord(after: before, through: end, in: txn) { event in
                    last = event.position
                    count += 1
                    keepGoing = try body(event)
                    return keepGoing && count < chunk
                }
            }
            if last == before { break }
        }
        return last
    }

    /// Calls `body` with each event after `position` through `end` as `txn`
    /// sees the log, until it returns false; throws on a gap or a malformed
    /// record, since every caller relies on a whole, ordered log.
    func forEachRecord(after position: Position, through end: Position, in txn: ReadTransaction,
                       _ body: (RecordedEvent) throws -> Bool) throws {
        try databases.forEachRecord(after: position, through: end, in: txn) { event, _ in try body(event) }
    }

    /// The checkpoint of projection `name`.
    public func checkpoint(of name: String) throws -> Checkpoint? {
        try environment.read { try databases.checkpoint(of: name, in: $0) }
    }
}
