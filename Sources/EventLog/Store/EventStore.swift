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
    /// The LMDB transaction id of this store's last commit that appended
    /// (and so moved every checkpoint to the head); nil after any other
    /// outcome. See `commitsFollowOn(_:)`.
    let lastCommit = LockedValue<Int?>(nil)

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
        if options.readOnly || !options.createIfMissing { try StoreDirectory.checkExists(path) }
        metrics = StoreMetrics(path: path)
        environment = try StoreDirectory.open(path, options: options.environmentOptions(metrics: metrics))
        self.options = options
        groupCommit = GroupCommit(maxGroup: options.maxGroupCommit)
        commits = CommitSignal()
        if options.readOnly {
            (databases, views) = try Self.openForReading(environment, path: path)
            (index, indexUnavailable) = try Self.openIndexForReading(views: views, log: environment, options: options)
            indexer = nil
            return
        }
        // Never add the log's databases to another program's environment.
        try StoreDirectory.refuseForeign(environment, path: path)
        (databases, views) = try environment.write { txn in
            let databases = try LogDatabases(openingIn: txn)
            if try Self.checkFormat(databases, in: txn, path: path) != .current {
                try databases.setFormat(.current, in: txn)
            }
            try databases.noteNewestDictionary(in: txn)
            return (databases, try Views(openingIn: txn))
        }
        index = try Self.openIndex(views: views, log: environment, databases: databases, options: options)
        indexUnavailable = nil
        indexer = try Self.makeIndexer(index, log: environment, databases: databases, commits: commits, options: options, metrics: metrics)
        try catchUp()
        try dropIndexLeftInLog()
        try indexer?.start()
        groupCommit.start { [weak self] group in self?.commit(group) }
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
                throw StoreDirectory.foreign(path, databases: try txn.databaseNames())
            }
            _ = try checkFormat(databases, in: txn, path: path)
            do {
                return (databases, try Views(openingIn: txn))
            } catch let error as LMDBError where error == .notFound {
                throw EventLogError(.viewsStale, operation: "open",
                                    "the store has no database that these projections open (\(error.call)): its views were built by other projections; "
                                        + "`replay` with this version rebuilds them (the log itself can be read with a build that matches)")
            }
        }
    }

    /// The stored format, after checking that this version reads it; nil in
    /// a store that has none yet.
    @discardableResult
    private static func checkFormat(_ databases: LogDatabases, in txn: ReadTransaction, path: String) throws -> StoreFormat? {
        guard let stored = try databases.format(in: txn) else { return nil }
        guard StoreFormat.readable.contains(stored.version) else {
            throw EventLogError(.incompatibleFormat, operation: "open",
                                "the store at \(path) has format \(stored.version); this version reads formats \(StoreFormat.readable.lowerBound) to \(StoreFormat.readable.upperBound)")
        }
        return stored
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
        return try withoutActuallyEscaping(body) { body in
            try groupCommit.write(WriteRequest(options, time: transactionTime(options), body))
        }
    }

    /// The time of a write made with `options`: ``WriteOptions/time``, else
    /// the store's clock (``StoreOptions/clock``), read now. Every write
    /// decides its time here once, before its closure first runs, so that a
    /// run again after the map grew records the same time.
    package func transactionTime(_ options: WriteOptions) -> Date {
        options.time ?? self.options.clock()
    }

    /// How many transactions the group commit wrote since the store opened,
    /// and how many writes they carried.
    public var groupCommitStatistics: GroupCommitStatistics { groupCommit.counts }

    /// What follows a write that committed: subscriptions wake, snapshots
    /// built from redacted payloads go, an automatic snapshot may start.
    /// The snapshots removed, in the transaction and after it, go into
    /// `receipt.removedSnapshots`.
    func committed<R>(_ receipt: inout WriteReceipt<R>) {
        if receipt.positions != nil && !receipt.isRetry { commits.signal() }
        if !receipt.isRetry, let last = receipt.positions?.upperBound {
            indexer?.appended(through: last, bytes: receipt.appendedBytes, limit: options.indexBacklogLimit, wait: options.indexBacklogWait)
        }
        if let from = receipt.redactedFrom {
            let late = (try? removeSnapshots(from: from, throwing: false)) ?? []
            receipt.removedSnapshots = Array(Set(receipt.removedSnapshots + late)).sorted()
        }
        snapshotIfDue(appended: receipt.isRetry ? nil : receipt.positions)
        if receipt.positions != nil && !receipt.isRetry { trainDictionaryIfDue() }
    }

    /// Appends `events` as one batch.
    @discardableResult
    public func append(_ events: [NewEvent], _ options: WriteOptions = WriteOptions()) throws -> WriteReceipt<Void> {
        try write(options) { batch in
            for event in events { try batch.append(event) }
        }
    }

    /// Executes one write inside its group's transaction, appending after
    /// `head` (the log's last record in `txn`) and moving `head` past what it
    /// appended: the idempotency key, the expected head, the closure, the
    /// projections' finish, the key's entry. `earlier` is the write's
    /// receipt from a run that the map's growth undid: the snapshots that
    /// run removed stay removed, so the new receipt reports them too.
    func execute<R>(_ options: WriteOptions, at time: Date, _ body: (LogBatch) throws -> R,
                    in txn: WriteTransaction, head: inout RecordedHead, after earlier: WriteReceipt<R>?) throws -> WriteReceipt<R> {
        let removedEarlier = earlier?.removedSnapshots ?? []
        if let key = options.idempotencyKey, let entry = try databases.idempotencyEntry(key, in: txn) {
            var receipt = WriteReceipt<R>(value: nil, positions: entry.positions, isRetry: true)
            receipt.removedSnapshots = removedEarlier
            return receipt
        }
        let batch = try LogBatch(transaction: txn, databases: databases, projections: views.all, head: head, time: time)
        if let expected = options.expectedHead, expected != batch.head {
            throw EventLogError(.headMismatch, operation: "append",
                                "expected the head at \(expected), but another writer moved it to \(batch.head)",
                                position: batch.head)
        }
        let value = try body(batch)
        try batch.finish()
        let removedSnapshots = try batch.redactedFrom.map { try removeSnapshots(from: $0, throwing: true) } ?? []
        if let key = options.idempotencyKey {
            let entry = IdempotencyEntry(first: batch.firstAppended ?? batch.head + 1,
                                         count: batch.appended.map { UInt64($0.count) } ?? 0)
            try databases.idempotency.put(entry, forKey: key, in: txn)
        }
        var receipt = WriteReceipt(value: value, positions: batch.appended, isRetry: false)
        receipt.redactedFrom = batch.redactedFrom
        receipt.appendedBytes = batch.appendedBytes
        receipt.removedSnapshots = removedEarlier + removedSnapshots
        head = batch.recordedHead
        return receipt
    }

    /// Writes a group of requests in one transaction (on the writer thread).
    /// Alone, a request runs in the transaction itself; in company each runs
    /// in a nested transaction, so that one that throws undoes only its own
    /// writes. A full map undoes the whole group, which runs again in the
    /// grown map.
    ///
    /// A request of a ``WritePipeline`` whose predecessor failed does not
    /// run; it fails with ``EventLogError/Code/pipelineHalted``.
    func commit(_ group: [any QueuedWrite]) {
        metrics.writesInFlight.record(writes.count)
        let started = StoreMetrics.now()
        var committedHead: Position = 0
        do {
            let wrote = try environment.write { txn -> Bool in
                let before = try databases.head(in: txn)
                if !commitsFollowOn(txn) { try catchUpInPlace(in: txn, head: before.position) }
                var head = before
                if group.count == 1 {
                    if let halted = group[0].haltedBy {
                        group[0].fail(halted)
                    } else {
                        try group[0].run(on: self, in: txn, head: &head)
                    }
                } else {
                    for request in group {
                        if let halted = request.haltedBy {
                            request.fail(halted)
                            continue
                        }
                        var moved = head
                        do {
                            try txn.nested { try request.run(on: self, in: $0, head: &moved) }
                            head = moved
                        } catch let error as LMDBError where error == .mapFull {
                            throw error   // the whole group runs again in a grown map
                        } catch {
                            request.fail(error)
                        }
                    }
                }
                guard head.position != before.position else { return false }
                try databases.setRecordedHead(head, in: txn)
                try databases.setCheckpoints(of: views.all, to: head.position, in: txn)
                lastCommit.set(txn.id)
                committedHead = head.position
                return true
            }
            if !wrote { lastCommit.set(nil) }
            if wrote {
                metrics.recordCommit(writes: group.count { !$0.hasFailed }, nanoseconds: StoreMetrics.now() - started,
                                     head: committedHead)
            }
            for request in group where !request.hasFailed { request.committed(on: self) }
        } catch {
            lastCommit.set(nil)
            for request in group where !request.hasFailed { request.fail(error) }
        }
    }

    /// True when `txn` is the write transaction right after this store's
    /// last appending commit (LMDB numbers write transactions one by one,
    /// across processes): no one else wrote in between, so every projection
    /// is still at the head, where that commit left its checkpoint, and the
    /// catch-up check (a read of each checkpoint) can be skipped.
    private func commitsFollowOn(_ txn: WriteTransaction) -> Bool {
        guard let last = lastCommit.get() else { return false }
        return txn.id == last + 1
    }

    // MARK: Catching up

    /// Applies to each projection the events it has not seen, in
    /// transactions of ``StoreOptions/catchUpChunk`` events; rebuilds from
    /// position 1 a projection whose stored version differs.
    func catchUp() throws {
        while true {
            let done = try environment.write { txn -> Bool in
                let head = try databases.head(in: txn).position
                let lagging = try laggingProjections(in: txn, head: head)
                guard let from = lagging.map(\.from).min() else { return true }
                let through = min(head, from + UInt64(options.catchUpChunk) - 1)
                try apply(from: from, through: through, lagging: lagging, in: txn)
                return through == head
            }
            if done { return }
        }
    }

    /// Inside a write, before new events: a projection that another writer
    /// left behind (an older build, say) catches up first.
    private func catchUpInPlace(in txn: WriteTransaction, head: Position) throws {
        let lagging = try laggingProjections(in: txn, head: head)
        guard let from = lagging.map(\.from).min() else { return }
        try apply(from: from, through: head, lagging: lagging, in: txn)
    }

    private func laggingProjections(in txn: WriteTransaction, head: Position) throws -> [(projection: any Projection, from: Position)] {
        var lagging: [(projection: any Projection, from: Position)] = []
        for projection in views.all {
            var checkpoint = try databases.checkpoint(of: projection.name, in: txn)
            if let stored = checkpoint, stored.version != projection.version {
                options.logger.notice("rebuilding projection from position 1", metadata: [
                    "projection": "\(projection.name)", "stored version": "\(stored.version)", "version": "\(projection.version)"])
                try projection.removeAllData(in: txn)
                checkpoint = nil
                try databases.setCheckpoint(Checkpoint(position: 0, version: projection.version), of: projection.name, in: txn)
            } else if checkpoint == nil {
                try databases.setCheckpoint(Checkpoint(position: 0, version: projection.version), of: projection.name, in: txn)
            }
            let position = checkpoint?.position ?? 0
            if position < head { lagging.append((projection, position + 1)) }
        }
        return lagging
    }

    /// Applies positions `from...through` to the lagging projections, each
    /// from its own checkpoint on, and moves their checkpoints.
    private func apply(from: Position, through: Position, lagging: [(projection: any Projection, from: Position)],
                       in txn: WriteTransaction) throws {
        let applier = try ProjectionApplier(lagging.map(\.projection), starts: lagging.map(\.from), in: txn,
                                            log: logReader(in: txn))
        try forEachRecord(after: from - 1, through: through, in: txn) { event in
            try applier.apply(event)
            return true
        }
        try applier.finish(movingCheckpointsTo: through, in: databases.checkpoints)
        options.logger.debug("projections caught up", metadata: ["through": "\(through)", "count": "\(lagging.count)"])
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
