import EventLog
import Foundation
import Logging
import Metrics
import PostgresNIO

/// How a follower works.
public struct FollowOptions: Sendable {
    /// Records fetched and appended per transaction, at most.
    public var batchRecords = 1_000
    /// How long a caught-up follower waits for new records before it asks
    /// PostgreSQL again when no `NOTIFY` woke it: the bound on its delay when
    /// notifications are lost (they are only a hint).
    public var pollInterval: Duration = .milliseconds(500)
    /// The longest wait between attempts while PostgreSQL is unreachable.
    public var maxRetryDelay: Duration = .seconds(5)
    /// Whether to record the stream's head in the store (``FollowState``) for
    /// `eventlog stats`; a restore does not.
    public var recordsFollowState = true
    public var logger = Logger(label: "eventlog.follow")

    public init() {}
}

/// Builds a store from a stream in PostgreSQL: appends the exact records,
/// checking each link against the one before as it arrives, through the
/// store's one write path, so its projections build the leader's views. It
/// serves reads as any store does; its lag is in ``EventStore/followState()``.
///
/// It stops with ``ShippingError/Code/diverged`` on a fork: a record whose
/// link does not follow, or a store ahead of the stream.
///
/// ```swift
/// let follower = try LogFollower(store: store, from: PostgresLocation(url: url), stream: "shard-1")
/// try await follower.run()         // follows until cancelled
/// ```
public final class LogFollower<Views: ProjectionSet>: Sendable {
    public let store: EventStore<Views>
    public let location: PostgresLocation
    public let stream: String
    public let options: FollowOptions
    /// `eventlog_followed_position` (swift-metrics): the last position appended.
    let positionGauge: Gauge

    public init(store: EventStore<Views>, from location: PostgresLocation, stream: String, options: FollowOptions = FollowOptions()) throws {
        try StreamTables.validate(stream: stream, operation: "follow")
        guard options.batchRecords > 0 else {
            throw ShippingError(.invalidArgument, operation: "follow", "batch of \(options.batchRecords) records; allowed: at least 1")
        }
        self.store = store
        self.location = location
        self.stream = stream
        self.options = options
        positionGauge = Gauge(label: "eventlog_followed_position", dimensions: [("store", store.metrics.store), ("stream", stream)])
    }

    /// Appends the stream's records until caught up (`once`; with `through`,
    /// until that position), or keeps following until the task is cancelled.
    @discardableResult
    public func run(once: Bool = false, through: Position? = nil,
                    progress: (@Sendable (ShipProgress) -> Void)? = nil) async throws -> ShipProgress {
        let started = ContinuousClock.now
        var delay: Duration = .milliseconds(100)
        var totals = (records: UInt64(0), bytes: UInt64(0))
        while true {
            do {
                let connection = try await location.connect(logger: options.logger)
                do {
                    let result = try await session(connection, once: once, through: through, totals: &totals,
                                                   started: started, progress: progress)
                    closeWithoutWaiting(connection)
                    return result
                } catch {
                    closeWithoutWaiting(connection)
                    throw error
                }
            } catch let error as ShippingError where !error.isTransient {
                throw error
            } catch let error as EventLogError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if once || Task.isCancelled { throw LogShipper<Views>.unavailable(error) }
                options.logger.warning("following interrupted; retrying", metadata: [
                    "stream": "\(stream)", "error": "\(describe(error))", "retry in": "\(delay)"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, options.maxRetryDelay)
            }
        }
    }

    private func session(_ connection: PostgresConnection, once: Bool, through: Position?,
                         totals: inout (records: UInt64, bytes: UInt64), started: ContinuousClock.Instant,
                         progress: (@Sendable (ShipProgress) -> Void)?) async throws -> ShipProgress {
        let tables = StreamTables(connection: connection, stream: stream, logger: options.logger)
        if let epoch = try store.shippingEpoch(stream: stream) {
            throw ShippingError(.refused, operation: "follow",
                                "this store is the leader of stream \(stream) (it ships epoch \(epoch)); a leader does not follow its own stream")
        }
        if let follow = try store.followState(), follow.stream != stream {
            throw ShippingError(.refused, operation: "follow", "this store follows stream \(follow.stream), not \(stream)")
        }
        guard var head = try await tables.head() else {
            throw ShippingError(.missing, operation: "follow", "there is no stream \(stream) at \(location)")
        }
        if once, let through, through > head.position {
            throw ShippingError(.invalidArgument, operation: "follow",
                                "position \(through) is past stream \(stream)'s head \(head.position); allowed: 1 to \(head.position)", position: through)
        }
        var local = try store.headAndLink()
        if local.position > head.position {
            throw ShippingError(.diverged, operation: "follow",
                                "this store's head \(local.position) is ahead of stream \(stream)'s head \(head.position): it holds records the stream does not (--resync rebuilds it from the stream)",
                                position: head.position + 1)
        }
        if local.position > 0 {
            let theirs = try await tables.record(at: local.position)
            guard let theirs else {
                throw ShippingError(.missing, operation: "follow", "record \(local.position) is missing from stream \(stream)", position: local.position)
            }
            guard theirs.link == local.link else {
                throw ShippingError(.diverged, operation: "follow",
                                    "stream \(stream)'s record \(local.position) differs from this store's (link \(theirs.link), ours \(local.link)): a fork (--resync rebuilds it from the stream)",
                                    position: local.position)
            }
        }
        // NOTIFY wakes a caught-up follower early; a second connection listens.
        let wakeup = CommitSignal()
        let listener = once ? nil : Task { [location, stream, logger = options.logger] in
            guard let listening = try? await location.connect(logger: logger) else { return }
            _ = try? await listening.listen(on: StreamTables.channel) { notifications in
                for try await notification in notifications where notification.payload == stream { wakeup.signal() }
            }
            closeWithoutWaiting(listening)
        }
        defer { listener?.cancel() }
        var stateWritten = ContinuousClock.now
        while true {
            try Task.checkCancellation()
            let end = through.map { min($0, head.position) } ?? head.position
            if local.position >= end {
                if once {
                    return report(head: head, local: local.position, totals: totals, started: started)
                }
                let seen = wakeup.generation
                guard let now = try await tables.head() else {
                    throw ShippingError(.missing, operation: "follow", "stream \(stream) disappeared from \(location)")
                }
                if now.position < local.position {
                    throw ShippingError(.diverged, operation: "follow",
                                        "stream \(stream)'s head went back to \(now.position), behind this store's \(local.position)",
                                        position: now.position + 1)
                }
                head = now
                if now.position == local.position {
                    // Caught up: say so now and then, so that a follower that
                    // stopped shows an old "seen at" instead of a lag of 0.
                    if options.recordsFollowState && ContinuousClock.now - stateWritten > .seconds(5) {
                        let state = FollowState(stream: stream, streamHead: now.position, streamEpoch: now.epoch, seenAt: Date())
                        _ = try await store.appendRecords([], follow: state)
                        stateWritten = ContinuousClock.now
                    }
                    await wakeup.wait(after: seen, timeout: options.pollInterval)
                }
                continue
            }
            let records = try await tables.records(after: local.position, through: end, limit: options.batchRecords)
            let authorizations = try await authorizations(for: records, after: local.position, tables: tables)
            let state = options.recordsFollowState
                ? FollowState(stream: stream, streamHead: head.position, streamEpoch: head.epoch, seenAt: Date()) : nil
            let dictionaries = try await tables.dictionaries(try store.missingDictionaries(of: records + authorizations))
            do {
                _ = try await store.appendRecords(records, authorizations: authorizations, follow: state, dictionaries: dictionaries)
                stateWritten = ContinuousClock.now
            } catch let error as EventLogError where error.code == .diverged {
                throw ShippingError(.diverged, operation: "follow", "stream \(stream): \(error.message)", position: error.position)
            }
            let last = records[records.count - 1]
            local = (last.position, last.link)
            positionGauge.record(Int64(clamping: local.position))
            totals.records += UInt64(records.count)
            totals.bytes += UInt64(records.reduce(0) { $0 + $1.bytes.count })
            // With `once`, the run ends at the stream's head as it started.
            if !once, local.position == head.position, let refreshed = try await tables.head() { head = refreshed }
            progress?(report(head: head, local: local.position, totals: totals, started: started))
        }
    }

    /// For a batch that holds redacted records: the redaction records that
    /// authorize them (past the store's head, maybe past the batch), which
    /// the store does not hold yet as pending authorizations. The stream
    /// always holds them: a shipper ships a redacted record and its
    /// redaction record in one transaction (`Docs/Scaling.md`, "Erasure").
    private func authorizations(for records: [LogRecord], after position: Position, tables: StreamTables) async throws -> [LogRecord] {
        guard let last = records.last, records.contains(where: \.isRedacted) else { return [] }
        let known = Set(try store.pendingRedactions().map(\.position))
        let needed = try await tables.authorizations(after: position, through: last.position).filter { !known.contains($0) }
        let inBatch = needed.compactMap { p in p <= last.position ? records[Int(p - position - 1)] : nil }
        return inBatch + (try await tables.records(at: needed.filter { $0 > last.position }))
    }

    private func report(head: StreamHead, local: Position, totals: (records: UInt64, bytes: UInt64),
                        started: ContinuousClock.Instant) -> ShipProgress {
        ShipProgress(stream: stream, epoch: head.epoch, position: head.position, link: head.link, storeHead: local,
                     records: totals.records, bytes: totals.bytes,
                     seconds: Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000)
    }
}

/// Rebuilds a store from a stream alone: `eventlog restore`.
public enum LogRestore {
    /// Appends the stream's records through `position` (its head when nil)
    /// to `store`, which must be empty; its last link is then the leader's
    /// at that position.
    ///
    /// ```swift
    /// let store = try EventStore<Views>(path: "/var/lib/app/restored")
    /// try await LogRestore.restore(into: store, from: PostgresLocation(url: url), stream: "shard-1", through: 5_000)
    /// ```
    @discardableResult
    public static func restore<Views: ProjectionSet>(
        into store: EventStore<Views>, from location: PostgresLocation, stream: String, through position: Position? = nil,
        options: FollowOptions = FollowOptions(), progress: (@Sendable (ShipProgress) -> Void)? = nil
    ) async throws -> ShipProgress {
        let head = try store.head()
        guard head == 0 else {
            throw ShippingError(.refused, operation: "restore", "the store at \(store.environment.path) is not empty (head \(head)); a restore builds a new store")
        }
        if position == 0 {
            throw ShippingError(.invalidArgument, operation: "restore", "position 0; allowed: 1 to the stream's head")
        }
        var options = options
        options.recordsFollowState = false
        return try await LogFollower(store: store, from: location, stream: stream, options: options)
            .run(once: true, through: position, progress: progress)
    }
}
