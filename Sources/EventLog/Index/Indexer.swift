import Foundation
import LMDB
import Logging

/// Follows the log in a store opened for writing and applies the index's
/// projections behind it, in the index environment (``StoreIndex``): the
/// same code as catch-up after a restart, followers (whose records arrive
/// in the log like any append) and rebuilds.
///
/// Three threads: two preparing ones (``IndexFeed``; one on a single
/// core) read committed records after the index's checkpoint and prepare
/// them (decoding, spaces, tokenizing: ``Projection/prepare(_:log:)``);
/// this one, the applying one, writes them in transactions bounded by ``IndexTransactionLimits``,
/// each with the checkpoint, and wakes who waits for a position
/// (``waitForProgress(beyond:until:)``). A commit through the store wakes
/// the feed at once (``CommitSignal``); another process's, within the
/// feed's poll interval.
///
/// Several processes may run one each: the index environment's write
/// lock orders their transactions, and each transaction checks that the
/// checkpoint is where its pieces follow on (``IndexTarget/Moved``), so
/// only one applies a position; the other starts again from the new
/// checkpoint. ``stop()`` ends it after the transaction it is in commits.
///
/// `@unchecked Sendable`: the mutable state is read and written only while
/// `condition` is locked.
final class Indexer: @unchecked Sendable {
    let log: IndexFeed.LogSource
    let target: IndexTarget
    let readAhead: Int
    let limits: IndexTransactionLimits
    let logger: Logger
    /// Where the index's lag is reported (``StoreMetrics/recordIndexLag(positions:seconds:)``).
    let metrics: StoreMetrics?

    private let condition = NSCondition()
    private var applied: Position
    private var stopping = false
    private var running = false
    private var thread: JoinableThread?
    private var feed: IndexFeed?
    /// This store's writes the applying thread has not taken into a
    /// transaction yet (the last position of each and its payload bytes),
    /// and their bytes: the backlog that ``appended(through:bytes:limit:wait:)``
    /// bounds. By position, so that what another process's indexer applies
    /// counts too. Taken rather than applied: the writes after a transaction
    /// are written and prepared while it is applied and committed, so the
    /// applying thread finds its next pieces ready.
    private var backlog: [(position: Position, bytes: Int)] = []
    private var backlogStart = 0
    private var backlogBytes = 0
    /// The last position the applying thread took into a transaction (or applied).
    private var taken: Position = 0
    /// With metrics: this store's writes the index has not applied yet (the
    /// last position of each, and when it was appended, in
    /// ``StoreMetrics/now()`` nanoseconds), for the lag each commit reports.
    private var unapplied: [(position: Position, at: UInt64)] = []
    private var unappliedStart = 0
    /// The last failure, and when the failures since the last commit began.
    private var failure: (failure: IndexFailure, since: Date)?

    init(log: IndexFeed.LogSource, target: IndexTarget, applied: Position, readAhead: Int,
         limits: IndexTransactionLimits, logger: Logger, metrics: StoreMetrics? = nil) {
        self.log = log
        self.target = target
        self.applied = applied
        self.readAhead = readAhead
        self.limits = limits
        self.logger = logger
        self.metrics = metrics
    }

    func start() throws {
        condition.lock()
        running = true
        condition.unlock()
        thread = try JoinableThread(name: "eventlog.index.apply") { [self] in run() }
    }

    /// Stops after the transaction being written commits, and waits for both
    /// threads to end (so that they hold the environments no longer).
    func stop() {
        condition.lock()
        stopping = true
        let feed = self.feed
        condition.broadcast()
        condition.unlock()
        feed?.stop()
        log.commits.interruptBlockedWaits()
        thread?.join()
    }

    /// The last position this indexer applied (or found applied).
    var appliedPosition: Position {
        condition.lock()
        defer { condition.unlock() }
        return applied
    }

    /// Why the last attempt failed, and since when attempts fail, until one commits.
    var lastFailure: (failure: IndexFailure, since: Date)? {
        condition.lock()
        defer { condition.unlock() }
        return failure
    }

    /// Waits until this indexer applied past `position`, or `deadline`; the position it applied then.
    @discardableResult
    func waitForProgress(beyond position: Position, until deadline: Date) -> Position {
        condition.lock()
        defer { condition.unlock() }
        while applied <= position && running {
            if !condition.wait(until: deadline) { break }
        }
        return applied
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    /// `committed`: this indexer's commit moved the index to `position`,
    /// which ends a run of failures. An attempt starts with `committed`
    /// false: starting again is no success, unless another process's
    /// commit has moved the index on since (`position` past `applied`).
    private func publish(_ position: Position, committed: Bool = true) {
        condition.lock()
        if committed || position > applied { failure = nil }
        applied = position
        dropBacklog(through: position)
        let lag = metrics == nil ? nil : dropUnapplied(through: position)
        condition.broadcast()
        condition.unlock()
        if let metrics, let lag {
            metrics.recordIndexLag(positions: lag.positions, seconds: lag.seconds)
        }
    }

    /// Under `condition`: forgets the writes applied through `position`;
    /// returns how far the index lags this store's writes then, in positions
    /// and in the seconds the oldest of them has waited.
    private func dropUnapplied(through position: Position) -> (positions: UInt64, seconds: Double) {
        while unappliedStart < unapplied.count && unapplied[unappliedStart].position <= position { unappliedStart += 1 }
        if unappliedStart > 1_024 && unappliedStart * 2 > unapplied.count {
            unapplied.removeFirst(unappliedStart)
            unappliedStart = 0
        }
        guard unappliedStart < unapplied.count else { return (0, 0) }
        return (unapplied[unapplied.count - 1].position - position,
                Double(StoreMetrics.now() &- unapplied[unappliedStart].at) / 1e9)
    }

    /// The applying thread took the events through `position` into its transaction.
    private func took(through position: Position) {
        condition.lock()
        dropBacklog(through: position)
        condition.broadcast()
        condition.unlock()
    }

    /// Under `condition`.
    private func dropBacklog(through position: Position) {
        taken = max(taken, position)
        while backlogStart < backlog.count && backlog[backlogStart].position <= position {
            backlogBytes -= backlog[backlogStart].bytes
            backlogStart += 1
        }
        if backlogStart > 1_024 && backlogStart * 2 > backlog.count {
            backlog.removeFirst(backlogStart)
            backlogStart = 0
        }
    }

    /// A write of this store appended `bytes` of payload, through
    /// `position`: returns once the backlog before it (what this store
    /// appended earlier and the indexer has not taken into a transaction)
    /// is at most `limit`,
    /// or after `wait`, or at once when the indexer stopped or fails. The
    /// write itself is not counted, so that one larger than the limit (a
    /// batch of 5,000 items) still has the indexer work on it while the
    /// next one is written.
    func appended(through position: Position, bytes: Int, limit: Int?, wait: Duration) {
        condition.lock()
        defer { condition.unlock() }
        if metrics != nil && position > applied { unapplied.append((position, StoreMetrics.now())) }
        guard position > taken else { return }
        backlog.append((position, bytes))
        backlogBytes += bytes
        guard let limit, backlogBytes - bytes > limit else { return }
        let deadline = Date(timeIntervalSinceNow: wait.secondsValue)
        while backlogBytes - (taken < position ? bytes : 0) > limit && running && !stopping && failure == nil {
            if !condition.wait(until: deadline) { return }
        }
    }

    // MARK: The thread

    private func run() {
        defer {
            condition.lock()
            running = false
            feed = nil
            condition.broadcast()
            condition.unlock()
        }
        var backoff = 0.05
        while !isStopping {
            do {
                try follow()
                backoff = 0.05
            } catch let moved as IndexTarget.Moved {
                // Another process's indexer applied meanwhile: go on from its checkpoint.
                publish(moved.to.position)
            } catch {
                let failure = error as? IndexFailure ?? IndexFailure(position: appliedPosition + 1, error: error)
                logger.warning("the index could not apply the log; trying again", metadata: [
                    "position": "\(failure.position)", "error": "\(failure.error)", "retry in seconds": "\(backoff)"])
                condition.lock()
                self.failure = (failure, self.failure?.since ?? Date())
                condition.broadcast()
                if !stopping { _ = condition.wait(until: Date(timeIntervalSinceNow: backoff)) }
                condition.unlock()
                backoff = min(backoff * 2, 5)
            }
        }
    }

    /// From the index's checkpoint on, applies the log as it grows, until stopped.
    private func follow() throws {
        let start = try target.environment.write { txn -> RecordedHead in
            try Self.checkpointToFollow(target, log: log.environment, databases: log.databases, in: txn, logger: logger)
        }
        publish(start.position, committed: false)
        let feed = IndexFeed(log: log, after: start, readAhead: readAhead, end: nil,
                             onTake: { [weak self] position in self?.took(through: position) })
        condition.lock()
        guard !stopping else {
            condition.unlock()
            return
        }
        self.feed = feed
        condition.unlock()
        try feed.start()
        defer {
            condition.lock()
            self.feed = nil
            condition.unlock()
            feed.stop()
        }
        var expected = start
        var started: UInt64 = 0
        while !isStopping, let piece = feed.next(waiting: true) {
            pause(until: started + limits.minimumInterval.nanoseconds)
            started = DispatchTime.now().uptimeNanoseconds
            expected = try target.apply(piece, thenFrom: feed, expecting: expected, limits: limits, log: log)
            publish(expected.position)
        }
    }

    /// Waits until `deadline` (uptime nanoseconds), or until stopped.
    private func pause(until deadline: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        guard deadline > now else { return }
        condition.lock()
        if !stopping { _ = condition.wait(until: Date(timeIntervalSinceNow: Double(deadline - now) / 1e9)) }
        condition.unlock()
    }

    /// In a write transaction of the index: the checkpoint to go on from,
    /// after emptying the index when it cannot go on
    /// (``IndexDatabases/reasonToRebuild(_:logLink:in:)``). Throws when the
    /// index is ahead of the log: the log has lost records, and nothing is
    /// written over positions the index has seen.
    static func checkpointToFollow(_ target: IndexTarget, log: Environment, databases: LogDatabases, in txn: WriteTransaction,
                                   logger: Logger) throws -> RecordedHead {
        let reason = try log.read { logTxn -> String? in
            // A log behind the index has lost records: never written over, never taken for another history.
            let applied = try target.databases.applied(in: txn)
            let history = try DerivedHistory.of(position: applied.position, link: applied.link, log: databases, in: logTxn)
            if history.isAheadOfLog, let refusal = history.refusal(of: "the store's index at \(target.environment.path)", store: log.path,
                                                                   remedy: EnvironmentDirectory.index(log.path).rebuildRemedy) {
                throw refusal
            }
            return try target.databases.reasonToRebuild(target.projections, logLink: { try databases.link(at: $0, in: logTxn) }, in: txn)
        }
        if let reason {
            logger.notice("rebuilding the index from position 1", metadata: ["reason": "\(reason)"])
            try target.databases.clear(target.projections, in: txn)
        }
        return try target.databases.applied(in: txn)
    }
}
