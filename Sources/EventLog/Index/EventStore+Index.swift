import Foundation
import LMDB

extension EventStore {
    // MARK: Opening

    /// Opens (creating) the index environment of a store opened for
    /// writing and brings it to a state the indexer can go on from: emptied
    /// when it was built by other projection versions or from another log.
    static func openIndex(views: Views, log: Environment, databases: LogDatabases,
                          options: StoreOptions) throws -> StoreIndex<Views.Index>? {
        guard Views.hasIndex else { return nil }
        var indexOptions = options.environmentOptions
        indexOptions.durability = options.indexDurability
        let directory = EnvironmentDirectory.index(log.path)
        let environment = try directory.open(options: indexOptions)
        // Never add the index's databases to another program's environment.
        try directory.refuseForeign(environment)
        let (indexDatabases, index) = try environment.write { txn in
            let indexDatabases = try IndexDatabases(openingIn: txn)
            let index = try views.openIndex(in: txn)
            try refuseSharedDatabaseNames(views.all, index.all)
            if try indexDatabases.metadata.checkFormat(in: txn, path: environment.path) == nil {
                // A new index: at position 0, its checkpoints there.
                try indexDatabases.metadata.setFormat(.index, in: txn)
                try indexDatabases.clear(index.all, in: txn)
            }
            let target = IndexTarget(environment: environment, databases: indexDatabases, projections: index.all)
            _ = try Indexer.checkpointToFollow(target, log: log, databases: databases, in: txn, logger: options.logger)
            return (indexDatabases, index)
        }
        return StoreIndex(environment: environment, views: index, databases: indexDatabases)
    }

    /// Each database belongs to one environment: a name that both the log's
    /// views and the index's projections open would be taken, at the next
    /// open for writing, for the index a one-environment store kept in the
    /// log (``dropIndexLeftInLog()``), and dropped there.
    static func refuseSharedDatabaseNames(_ views: [any Projection], _ index: [any Projection]) throws {
        let logNames = Set(views.flatMap(\.databaseNames).map { Name($0) })
        let shared = Set(index.flatMap(\.databaseNames).map { Name($0) }).intersection(logNames)
        guard shared.isEmpty else {
            throw EventLogError(.invalidArgument, operation: "open",
                                "the log's views and the index's projections both open database \(shared.sorted().map { "\"\($0)\"" }.joined(separator: ", ")): "
                                    + "each database lives in one environment; give the index's its own name")
        }
    }

    /// Opens the index environment of a store opened read-only, when it has
    /// one: nil when `index/` holds none yet (a store of the one-environment
    /// layout, never opened for writing since). An index that cannot be
    /// used (damaged, cut short, not an index, another format, a directory
    /// this user may not read) is nil with the error, which the reads of the
    /// index throw (``EventStore/indexUnavailable``): the reads of the log
    /// and its views, which do not touch it, still answer. So is an index
    /// the log does not vouch for (another history, or ahead of the log:
    /// ``DerivedHistory``), with its history.
    static func openIndexForReading(views: Views, log: Environment, databases: LogDatabases, options: StoreOptions)
        throws -> (index: StoreIndex<Views.Index>?, unavailable: EventLogError?, history: DerivedHistory?) {
        guard Views.hasIndex else { return (nil, nil, nil) }
        do {
            guard try EnvironmentDirectory.index(log.path).holdsData() else { return (nil, nil, nil) }
            let index = try openExistingIndex(views: views, log: log, options: options)
            let history = try index.history(against: log, databases: databases)
            if let refusal = history.refusal(of: "the store's index at \(index.environment.path)", store: log.path,
                                             remedy: EnvironmentDirectory.index(log.path).rebuildRemedy) {
                index.environment.close()
                return (nil, refusal, history)
            }
            return (index, nil, history)
        } catch let error as EventLogError where error.code != .storeBusy {
            return (nil, error, nil)
        }
    }

    private static func openExistingIndex(views: Views, log: Environment, options: StoreOptions) throws -> StoreIndex<Views.Index> {
        let directory = EnvironmentDirectory.index(log.path)
        let path = directory.path
        var indexOptions = options.environmentOptions
        indexOptions.durability = options.indexDurability
        let environment = try directory.open(options: indexOptions)
        let (indexDatabases, index) = try environment.openDatabases { txn in
            let indexDatabases: IndexDatabases
            do {
                indexDatabases = try IndexDatabases(openingIn: txn)
            } catch LMDBError.notFound {
                throw EventLogError(.corrupt, operation: "open", "\(path) holds an LMDB environment that is not an index (no meta database)")
            }
            try indexDatabases.metadata.checkFormat(in: txn, path: path)
            do {
                return (indexDatabases, try views.openIndex(in: txn))
            } catch let error as LMDBError where error == .notFound {
                throw EventLogError(.viewsStale, operation: "open",
                                    "the index has no database that these projections open (\(error.call)): it was built by other projections; "
                                        + "opening the store for writing (or `replay`) rebuilds it")
            }
        }
        return StoreIndex(environment: environment, views: index, databases: indexDatabases)
    }

    /// A store of the one-environment layout kept the index's databases
    /// (and their checkpoints) in the log environment: they go, and the
    /// indexer builds the index in its own environment behind the log.
    func dropIndexLeftInLog() throws {
        guard let index else { return }
        let names = Set(index.views.all.flatMap(\.databaseNames).map { Name($0) })
        let (found, checkpoints) = try environment.read { txn in
            (try txn.databaseNames().filter { names.contains(Name($0)) },
             try index.views.all.filter { try databases.checkpoint(of: $0.name, in: txn) != nil }.map(\.name))
        }
        guard !found.isEmpty || !checkpoints.isEmpty else { return }
        try environment.write { txn in
            for name in found {
                let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
                try db.drop(in: txn)
            }
            for name in checkpoints { try databases.checkpoints.remove(name, in: txn) }
        }
        options.logger.notice("the index's databases left in the log environment (a store of the one-environment layout) were dropped; the index is built in \(index.environment.path)",
                              metadata: ["databases": "\(found.sorted())"])
    }

    /// The indexer of a store opened for writing, not yet started.
    static func makeIndexer(_ index: StoreIndex<Views.Index>?, log: Environment, databases: LogDatabases, commits: CommitSignal,
                            options: StoreOptions, metrics: StoreMetrics) throws -> Indexer? {
        guard let index, !options.readOnly, options.indexesInBackground else { return nil }
        return Indexer(log: IndexFeed.LogSource(environment: log, databases: databases, projections: index.views.all, commits: commits),
                       target: index.target, applied: try index.applied(),
                       readAhead: options.indexReadAhead, limits: options.indexTransactionLimits, logger: options.logger,
                       metrics: metrics)
    }

    /// What the indexer reads: this store's log.
    func indexSource(_ index: StoreIndex<Views.Index>) -> IndexFeed.LogSource {
        IndexFeed.LogSource(environment: environment, databases: databases, projections: index.views.all, commits: commits)
    }

    /// Applies the log to the index in the caller's thread (and the feed's)
    /// until the index has applied it through `position` (the head when
    /// nil): for a store whose indexer does not run in the background
    /// (``StoreOptions/indexesInBackground``). Returns the position the
    /// index applied.
    @discardableResult
    public func catchUpIndex(through position: Position? = nil) throws -> Position {
        let index = try requireIndex(operation: "catch up the index")
        guard !options.readOnly else {
            throw EventLogError(.invalidArgument, operation: "catch up the index", "the store is open read-only")
        }
        let end = try position ?? head()
        let source = indexSource(index)
        while true {
            var expected = try index.environment.write { txn in
                try Indexer.checkpointToFollow(index.target, log: environment, databases: databases, in: txn, logger: options.logger)
            }
            guard expected.position < end else { return expected.position }
            let feed = IndexFeed(log: source, after: expected, readAhead: options.indexReadAhead, end: end)
            try feed.start()
            defer { feed.stop() }
            do {
                while let piece = feed.next(waiting: true) {
                    expected = try index.target.apply(piece, thenFrom: feed, expecting: expected, limits: .rebuild, log: source)
                }
                return expected.position
            } catch is IndexTarget.Moved {
                continue   // another indexer applied meanwhile: from its checkpoint
            }
        }
    }

    // MARK: Reading

    /// Runs `body` with a read transaction of the index and one of the log,
    /// begun in that order: the index as of its checkpoint, and the log as
    /// of at least that position, so that every record the index refers to
    /// is in the log's transaction (a document's content kept in the log is
    /// read there) and the log's views (a user's space) are at least as
    /// recent as the index.
    ///
    /// With `position`, it first waits, up to `timeout`, until the index has
    /// applied the log through it, else throws
    /// ``EventLogError/Code/indexBehind`` saying how far behind the index is.
    /// Without one, it reads the index as it is; ``indexStatus()`` says how
    /// far it lags.
    ///
    /// ```swift
    /// let receipt = try store.append([event])
    /// let count = try store.readIndex(after: receipt.positions!.upperBound) { index, log in
    ///     try store.index!.views.words.count(in: index)
    /// }
    /// ```
    public func readIndex<R>(after position: Position? = nil, timeout: Duration = .seconds(10),
                             _ body: (_ index: ReadTransaction, _ log: ReadTransaction) throws -> R) throws -> R {
        let index = try requireIndex(operation: "read index")
        if let position { try waitForIndex(through: position, timeout: timeout) }
        return try index.environment.read { indexTxn in
            if options.readOnly { try checkIndexVersions(index, in: indexTxn) }
            return try read { logTxn in
                // Read-only, the index may have been replaced since the open: the log vouches for it at every read.
                if options.readOnly { try checkIndexHistory(index, indexTxn: indexTxn, logTxn: logTxn) }
                return try body(indexTxn, logTxn)
            }
        }
    }

    /// Waits until the index has applied the log through `position` (the
    /// head when nil), up to `timeout`; throws
    /// ``EventLogError/Code/indexBehind`` when it has not, saying how far
    /// behind it is. Returns the position the index has applied.
    ///
    /// The indexer of this store wakes the wait when it commits; an indexer
    /// of another process (this store read-only, a service indexing it) is
    /// seen by looking at the index's checkpoint every few milliseconds.
    @discardableResult
    public func waitForIndex(through position: Position? = nil, timeout: Duration = .seconds(10)) throws -> Position {
        let index = try requireIndex(operation: "wait for the index")
        let target = try position ?? head()
        let deadline = Date(timeIntervalSinceNow: timeout.secondsValue)
        var pause = 0.001
        while true {
            let applied = try index.applied()
            if applied >= target { return applied }
            if Date() >= deadline {
                throw try indexBehind(index, wanted: target, applied: applied, waited: timeout)
            }
            if let indexer {
                indexer.waitForProgress(beyond: applied, until: min(deadline, Date(timeIntervalSinceNow: 0.05)))
            } else {
                Thread.sleep(forTimeInterval: min(pause, max(0, deadline.timeIntervalSinceNow)))
                pause = min(pause * 2, 0.02)
            }
        }
    }

    /// Waits until the index has applied past `position`, or `deadline`;
    /// returns the position it has applied then. Woken by this store's
    /// indexer as soon as it commits (no polling): for a monitor that timestamps
    /// each index commit (`eventlog bench` measures how long a write takes
    /// to become searchable). Without an indexer in this process it looks
    /// every few milliseconds.
    @discardableResult
    public func waitForIndex(beyond position: Position, until deadline: Date) throws -> Position {
        let index = try requireIndex(operation: "wait for the index")
        if let indexer {
            let applied = indexer.waitForProgress(beyond: position, until: deadline)
            return applied > position ? applied : try index.applied()
        }
        while true {
            let applied = try index.applied()
            if applied > position || Date() >= deadline { return applied }
            Thread.sleep(forTimeInterval: min(0.005, max(0, deadline.timeIntervalSinceNow)))
        }
    }

    private func indexBehind(_ index: StoreIndex<Views.Index>, wanted: Position, applied: Position, waited: Duration) throws -> EventLogError {
        let head = try self.head()
        var message = "the index has applied the log through position \(applied), \(wanted - applied) events short of position \(wanted) "
            + "(the log's head is \(head)); waited \(waited)"
        if let failure = indexer?.lastFailure {
            message += "; the indexer's last attempt failed: \(failure.failure)"
        } else if indexer == nil {
            message += "; no indexer runs in this process (it runs in a store opened for writing: a service, `eventlog replay`)"
        }
        return EventLogError(.indexBehind, operation: "read index", message, position: applied)
    }

    private func requireIndex(operation: String) throws -> StoreIndex<Views.Index> {
        if let index { return index }
        if let indexUnavailable { throw indexUnavailable }
        if Views.hasIndex {
            throw EventLogError(.viewsStale, operation: operation,
                                "the store at \(environment.path) has no index environment yet (\(StoreIndex<Views.Index>.directoryName)/): "
                                    + "opening it for writing (a service, `eventlog replay`) builds it behind the log")
        }
        throw EventLogError(.invalidArgument, operation: operation, "these projections have no index")
    }

    /// A store opened read-only serves no index built by other projection
    /// versions, and none whose projections are not where its `applied`
    /// says (its history then vouches for nothing).
    private func checkIndexVersions(_ index: StoreIndex<Views.Index>, in txn: ReadTransaction) throws {
        let applied = try index.databases.applied(in: txn).position
        for projection in index.views.all {
            let checkpoint = try index.databases.checkpoints.checkpoint(of: projection.name, in: txn)
            if let checkpoint, checkpoint.version != projection.version {
                throw EventLogError(.viewsStale, operation: "read index",
                                    "projection \(projection.name) of the index was built by version \(checkpoint.version), this code's is \(projection.version): "
                                        + "opening the store for writing (or `replay`) rebuilds it (opened read-only, the store rebuilds nothing)")
            }
            if (checkpoint?.position ?? 0) != applied {
                throw EventLogError(.corrupt, operation: "read index",
                                    "projection \(projection.name) of the index is at \(checkpoint?.position ?? 0), but the index says it applied the log "
                                        + "through \(applied): it is not read. \(EnvironmentDirectory.index(environment.path).rebuildRemedy)")
            }
        }
    }

    /// A store opened read-only reads no index of another history, and none ahead of the log.
    private func checkIndexHistory(_ index: StoreIndex<Views.Index>, indexTxn: ReadTransaction, logTxn: ReadTransaction) throws {
        let applied = try index.databases.applied(in: indexTxn)
        let history = try DerivedHistory.of(position: applied.position, link: applied.link, log: databases, in: logTxn)
        if let refusal = history.refusal(of: "the store's index at \(index.environment.path)", store: environment.path,
                                         remedy: EnvironmentDirectory.index(environment.path).rebuildRemedy, operation: "read index") {
            throw refusal
        }
    }

    /// The index's history: the position and link it applied through, and
    /// whether the log vouches for it (``DerivedHistory``). Nil when the
    /// store has no index environment, or one that cannot be read.
    public func indexHistory() throws -> DerivedHistory? {
        guard let index else { return indexHistoryAtOpen }
        return try index.history(against: environment, databases: databases)
    }

    /// How the index stands against the log: nil when the store has none by design.
    public func indexStatus() throws -> IndexStatus? {
        guard Views.hasIndex else { return nil }
        guard let index else {
            let head = try self.head()
            var status = IndexStatus(exists: false, applied: 0, head: head, secondsBehind: try ageOfRecord(after: 0),
                                     projections: [], isIndexing: false, lastFailure: nil, failingSince: nil)
            status.unavailable = indexUnavailable?.description
            status.history = indexHistoryAtOpen
            if let history = indexHistoryAtOpen { (status.exists, status.applied) = (true, history.position) }
            return status
        }
        return try index.environment.read { indexTxn in
            let applied = try index.databases.applied(in: indexTxn).position
            let projections = try index.views.all.map { projection in
                let checkpoint = try index.databases.checkpoints.checkpoint(of: projection.name, in: indexTxn)
                return ViewStatus.ProjectionState(name: projection.name, version: projection.version, storedVersion: checkpoint?.version,
                                                  checkpoint: checkpoint?.position ?? 0, head: applied)
            }
            let (head, history) = try environment.read { logTxn in
                (try databases.head(in: logTxn).position,
                 try DerivedHistory.of(position: applied, link: try index.databases.applied(in: indexTxn).link, log: databases, in: logTxn))
            }
            let failure = indexer?.lastFailure
            var status = IndexStatus(exists: true, applied: applied, head: head, secondsBehind: try ageOfRecord(after: min(applied, head)),
                                     projections: projections, isIndexing: indexer != nil, lastFailure: failure?.failure.description,
                                     failingSince: failure?.since)
            status.history = history
            return status
        }
    }

    /// Seconds since the record after `position` was appended (by its own
    /// time); 0 when there is none.
    private func ageOfRecord(after position: Position) throws -> Double {
        guard let event = try environment.read({ txn in try databases.log.withValue(forKey: position + 1, in: txn) { bytes in
            RecordLayout.View(bytes: bytes).isWellFormed ? Date(microsecondsSince1970: RecordLayout.View(bytes: bytes).micros) : nil
        } }) ?? nil else { return 0 }
        return max(0, Date().timeIntervalSince(event))
    }
}

/// How a store's index stands against its log (``EventStore/indexStatus()``).
///
/// ```swift
/// if let status = try store.indexStatus(), status.eventsBehind > 0 { print(status) }
/// // "the index is 120 events behind the log (applied through 4880, head 5000; the oldest waiting event was appended 0.04 s ago)"
/// ```
public struct IndexStatus: Sendable, Equatable, CustomStringConvertible {
    /// False when the store has no index environment yet (read-only, a
    /// store of the one-environment layout).
    public var exists: Bool
    /// The last position the index applied.
    public var applied: Position
    /// The log's head.
    public var head: Position
    /// Seconds since the oldest event the index has not applied was
    /// appended (its recorded time); 0 when it applied everything.
    public var secondsBehind: Double
    /// The index's projections: version and checkpoint.
    public var projections: [ViewStatus.ProjectionState]
    /// Whether an indexer runs in this process (a store opened for writing).
    public var isIndexing: Bool
    /// Why the indexer's last attempt failed, until one succeeds.
    public var lastFailure: String?
    /// Since when the indexer's attempts fail (nil while they succeed): it
    /// tries again, at longer and longer intervals (up to 5 s).
    public var failingSince: Date?
    /// Why the index cannot be used (a store opened read-only whose index
    /// is damaged, not an index, may not be read, or is not this log's);
    /// nil when it can.
    public var unavailable: String? = nil
    /// The position and link the index applied through, and whether the
    /// log vouches for it; nil when there is no index, or it cannot be read.
    public var history: DerivedHistory? = nil

    public var eventsBehind: UInt64 { head > applied ? head - applied : 0 }
    /// Some projection of the index was built by another version.
    public var hasOtherVersions: Bool { projections.contains(where: \.isOtherVersion) }

    public var description: String {
        if let unavailable { return "the index cannot be used: \(unavailable)" }
        guard exists else { return "the store has no index yet (\(eventsBehind) events to apply)" }
        if let other = projections.first(where: \.isOtherVersion) { return "the index: \(other)" }
        var text = eventsBehind == 0
            ? "the index is current at position \(applied)"
            : "the index is \(eventsBehind) events behind the log (applied through \(applied), head \(head); "
                + "the oldest waiting event was appended \(String(format: "%.2f", secondsBehind)) s ago)"
        if let lastFailure { text += "; the indexer's last attempt failed: \(lastFailure)" }
        return text
    }
}

extension Duration {
    /// The duration in seconds.
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    /// The duration in nanoseconds (0 when negative).
    var nanoseconds: UInt64 {
        components.seconds < 0 ? 0 : UInt64(components.seconds) * 1_000_000_000 + UInt64(components.attoseconds / 1_000_000_000)
    }
}
