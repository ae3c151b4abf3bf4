import Foundation
import LMDB

/// Writes a store's requests into its log environment, a group of them in
/// one LMDB write transaction, on the writer thread (``GroupCommit``): the
/// commit every write of the store goes through. It holds what the commit
/// needs (the environment, the log's databases, the command views, the
/// indexer to hand the new records to) and nothing of the store above it.
///
/// ```swift
/// let writer = LogWriter(environment: environment, databases: databases, projections: views.all, …)
/// try writer.catchUp()                  // on open: lagging views reach the head
/// groupCommit.start(writer)             // its thread calls writer.commit(group) from now on
/// ```
///
/// `@unchecked Sendable`: made before the writer thread starts, then used by
/// that thread alone (``lastCommit`` is read and set there only).
final class LogWriter: @unchecked Sendable {
    let environment: Environment
    let databases: LogDatabases
    /// The command views, applied in every commit.
    let projections: [any Projection]
    let options: StoreOptions
    let metrics: StoreMetrics
    /// Woken after each commit that appended: subscriptions, the indexer's feed.
    let commits: CommitSignal
    /// Told what each commit appended; a write waits there while the
    /// indexer's backlog is over its limit (``StoreOptions/indexBacklogLimit``).
    let indexer: Indexer?
    /// The writes counted in (a metric of each commit).
    let writes: WritesInFlight
    /// Where the snapshots are: a write that redacts removes those built
    /// from the payloads it redacts, in its transaction.
    let snapshotDirectory: String
    /// The LMDB transaction id of this writer's last commit that appended
    /// (and so moved every checkpoint to the head); nil after any other
    /// outcome (``followsOwnCommit(_:)``).
    private var lastCommit: Int?

    init(environment: Environment, databases: LogDatabases, projections: [any Projection], options: StoreOptions,
         metrics: StoreMetrics, commits: CommitSignal, indexer: Indexer?, writes: WritesInFlight) {
        self.environment = environment
        self.databases = databases
        self.projections = projections
        self.options = options
        self.metrics = metrics
        self.commits = commits
        self.indexer = indexer
        self.writes = writes
        snapshotDirectory = (environment.path as NSString).appendingPathComponent("snapshots")
    }

    // MARK: A group, in one transaction

    /// Writes `group` in one transaction and sets each request's outcome.
    /// Alone, a request runs in the transaction itself; in company each runs
    /// in a nested transaction, so that one that throws undoes only its own
    /// writes. A full map undoes the whole group, which runs again in the
    /// grown map. A request of a ``WritePipeline`` whose predecessor failed
    /// does not run; it fails with ``EventLogError/Code/pipelineHalted``.
    ///
    /// After the commit, for each request that appended: subscriptions and
    /// the indexer's feed wake, and the indexer is told (it may make the
    /// writer wait while its backlog is over the limit).
    func commit(_ group: [any QueuedWrite]) {
        metrics.writesInFlight.record(writes.count)
        let started = StoreMetrics.now()
        do {
            let committed = try environment.write { txn -> RecordedHead? in
                let before = try databases.head(in: txn)
                if !followsOwnCommit(txn) { try catchUp(through: before.position, in: txn) }
                let head = try run(group, in: txn, after: before)
                guard head.position != before.position else { return nil }
                try databases.setRecordedHead(head, in: txn)
                try databases.setCheckpoints(of: projections, to: head.position, in: txn)
                lastCommit = txn.id
                return head
            }
            if let committed {
                metrics.recordCommit(writes: group.count { !$0.hasFailed }, nanoseconds: StoreMetrics.now() - started,
                                     head: committed.position)
            } else {
                lastCommit = nil
            }
        } catch {
            lastCommit = nil
            for request in group where !request.hasFailed { request.failure = error }
            return
        }
        for request in group where !request.hasFailed {
            guard let written = request.written, !written.isRetry, let positions = written.positions else { continue }
            commits.signal()
            indexer?.appended(through: positions.upperBound, bytes: written.appendedBytes,
                              limit: options.indexBacklogLimit, wait: options.indexBacklogWait)
        }
    }

    /// Runs the requests of `group` in `txn`, appending after `head`; returns
    /// the head after them.
    private func run(_ group: [any QueuedWrite], in txn: WriteTransaction, after head: RecordedHead) throws -> RecordedHead {
        if group.count == 1 {
            if let halted = group[0].haltedBy {
                group[0].failure = halted
                return head
            }
            return try run(group[0], in: txn, after: head)
        }
        var head = head
        for request in group {
            if let halted = request.haltedBy {
                request.failure = halted
                continue
            }
            do {
                head = try txn.nested { try run(request, in: $0, after: head) }
            } catch let error as LMDBError where error == .mapFull {
                throw error   // the whole group runs again in a grown map
            } catch {
                request.failure = error
            }
        }
        return head
    }

    // MARK: One request

    /// Runs one request in `txn`, appending after `head` (the log's last
    /// record in `txn`), and returns the head after what it appended: the
    /// idempotency key, the expected head, the request's closure, the
    /// projections' finish, the key's entry. What it wrote goes into the
    /// request (``QueuedWrite/written``). A request run again after the map
    /// grew keeps the snapshots its undone run removed: they stay removed.
    private func run(_ request: any QueuedWrite, in txn: WriteTransaction, after head: RecordedHead) throws -> RecordedHead {
        let options = request.options
        let removedEarlier = request.written?.removedSnapshots ?? []
        request.failure = nil
        if let key = options.idempotencyKey, let entry = try databases.idempotencyEntry(key, in: txn) {
            request.written = Written(positions: entry.positions, isRetry: true, removedSnapshots: removedEarlier)
            return head
        }
        let batch = try LogBatch(transaction: txn, databases: databases, projections: projections, head: head, time: request.time)
        if let expected = options.expectedHead, expected != batch.head {
            throw EventLogError(.headMismatch, operation: "append",
                                "expected the head at \(expected), but another writer moved it to \(batch.head)",
                                position: batch.head)
        }
        try request.perform(batch)
        try batch.finish()
        let removed = try batch.redactedFrom.map {
            try RedactedSnapshots.remove(from: $0, in: snapshotDirectory, throwing: true)
        } ?? []
        if let key = options.idempotencyKey {
            let entry = IdempotencyEntry(first: batch.firstAppended ?? batch.head + 1,
                                         count: batch.appended.map { UInt64($0.count) } ?? 0)
            try databases.idempotency.put(entry, forKey: key, in: txn)
        }
        request.written = Written(positions: batch.appended, isRetry: false, redactedFrom: batch.redactedFrom,
                                  appendedBytes: batch.appendedBytes, removedSnapshots: removedEarlier + removed)
        return batch.recordedHead
    }

    /// True when `txn` is the write transaction right after this writer's
    /// last appending commit (LMDB numbers write transactions one by one,
    /// across processes): no one else wrote in between, so every projection
    /// is still at the head, where that commit left its checkpoint, and the
    /// catch-up check (a read of each checkpoint) can be skipped.
    private func followsOwnCommit(_ txn: WriteTransaction) -> Bool {
        guard let lastCommit else { return false }
        return txn.id == lastCommit + 1
    }

    // MARK: Catching up

    /// Applies to each projection the events it has not seen, in
    /// transactions of ``StoreOptions/catchUpChunk`` events; rebuilds from
    /// position 1 a projection whose stored version differs. On open,
    /// before the writer thread starts.
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

    /// Inside a commit, before new events: a projection that another writer
    /// left behind (an older build, say) catches up first.
    private func catchUp(through head: Position, in txn: WriteTransaction) throws {
        let lagging = try laggingProjections(in: txn, head: head)
        guard let from = lagging.map(\.from).min() else { return }
        try apply(from: from, through: head, lagging: lagging, in: txn)
    }

    private func laggingProjections(in txn: WriteTransaction, head: Position) throws -> [(projection: any Projection, from: Position)] {
        var lagging: [(projection: any Projection, from: Position)] = []
        for projection in projections {
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
                                            log: databases.logReader(in: txn))
        try databases.forEachRecord(after: from - 1, through: through, in: txn) { event, _ in
            try applier.apply(event)
            return true
        }
        try applier.finish(movingCheckpointsTo: through, in: databases.checkpoints)
        options.logger.debug("projections caught up", metadata: ["through": "\(through)", "count": "\(lagging.count)"])
    }
}
