import EventLog
import Foundation
import Logging
import Metrics
import PostgresNIO

/// How a shipper works.
public struct ShipOptions: Sendable {
    /// Records per PostgreSQL transaction, at most.
    public var batchRecords = 1_000
    /// Bytes of records per transaction, about (a larger record goes alone).
    public var batchBytes = 4 << 20
    /// How long a caught-up shipper waits before it looks at the log again
    /// when no commit of this process woke it: the bound on how late it sees
    /// another process's commits.
    public var pollInterval: Duration = .milliseconds(100)
    /// The longest wait between attempts while PostgreSQL is unreachable
    /// (the wait doubles from 100 ms up to it). Only when running without `once`.
    public var maxRetryDelay: Duration = .seconds(5)
    /// Start a new epoch: this store (a follower that has caught up) becomes
    /// the stream's leader, and the old leader's next batch is refused.
    public var takeOver = false
    public var logger = Logger(label: "eventlog.ship")

    public init() {}
}

/// Where a shipper (or follower) stands.
public struct ShipProgress: Sendable {
    public var stream: String
    /// The epoch this store ships (or the follower last saw).
    public var epoch: Int64
    /// The stream's head position in PostgreSQL.
    public var position: Position
    /// The stream's last link.
    public var link: ChainLink
    /// The store's head.
    public var storeHead: Position
    /// Records and bytes moved by this run.
    public var records: UInt64 = 0
    public var bytes: UInt64 = 0
    public var seconds: Double = 0
}

/// Copies a store's committed records, byte for byte and in order, into
/// PostgreSQL (`Docs/Scaling.md`): one PostgreSQL transaction a batch, which
/// locks the stream's head row and checks that the batch follows it (same
/// epoch, position + 1, previous link) before it inserts the records and
/// moves the head. It always starts from PostgreSQL's head, so after a crash
/// of either side it resumes where the last committed batch ended.
///
/// ```swift
/// let shipper = try LogShipper(store: store, to: PostgresLocation(url: url), stream: "shard-1")
/// try await shipper.run()          // follows the log until cancelled
/// ```
public final class LogShipper<Views: ProjectionSet>: Sendable {
    public let store: EventStore<Views>
    public let location: PostgresLocation
    public let stream: String
    public let options: ShipOptions
    /// `eventlog_shipped_position` (swift-metrics): the last position in PostgreSQL.
    let positionGauge: Gauge

    public init(store: EventStore<Views>, to location: PostgresLocation, stream: String, options: ShipOptions = ShipOptions()) throws {
        try StreamTables.validate(stream: stream, operation: "ship")
        guard options.batchRecords > 0, options.batchBytes > 0 else {
            throw ShippingError(.invalidArgument, operation: "ship", "batch of \(options.batchRecords) records, \(options.batchBytes) bytes; allowed: at least 1 of each")
        }
        self.store = store
        self.location = location
        self.stream = stream
        self.options = options
        positionGauge = Gauge(label: "eventlog_shipped_position", dimensions: [("store", store.metrics.store), ("stream", stream)])
    }

    /// Ships until caught up with the log (`once`), or keeps following it
    /// until the task is cancelled. Without `once`, PostgreSQL being
    /// unreachable is waited out (retrying with a growing delay); a fork, a
    /// fence or a damaged log ends the run with a ``ShippingError``.
    @discardableResult
    public func run(once: Bool = false, progress: (@Sendable (ShipProgress) -> Void)? = nil) async throws -> ShipProgress {
        let started = ContinuousClock.now
        var delay: Duration = .milliseconds(100)
        var takeOver = options.takeOver
        var totals = (records: UInt64(0), bytes: UInt64(0))
        while true {
            do {
                let connection = try await location.connect(logger: options.logger)
                do {
                    let result = try await session(connection, once: once, takeOver: &takeOver, totals: &totals,
                                                   started: started, progress: progress)
                    closeWithoutWaiting(connection)
                    if let result { return result }
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
                if once || Task.isCancelled { throw Self.unavailable(error) }
                options.logger.warning("shipping interrupted; retrying", metadata: [
                    "stream": "\(stream)", "error": "\(describe(error))", "retry in": "\(delay)"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, options.maxRetryDelay)
                continue
            }
            // A session ended to start over (another shipper moved the head).
            delay = .milliseconds(100)
        }
    }

    static func unavailable(_ error: any Error) -> any Error {
        if error is ShippingError || error is EventLogError || error is CancellationError { return error }
        return ShippingError(.unavailable, operation: "ship", describe(error))
    }

    /// One connection's work; nil to start over with a new session.
    private func session(_ connection: PostgresConnection, once: Bool, takeOver: inout Bool,
                         totals: inout (records: UInt64, bytes: UInt64), started: ContinuousClock.Instant,
                         progress: (@Sendable (ShipProgress) -> Void)?) async throws -> ShipProgress? {
        let tables = StreamTables(connection: connection, stream: stream, logger: options.logger)
        try await tables.create()
        let epoch = try await establishEpoch(tables, takeOver: takeOver)
        takeOver = false
        var (shipped, link) = try await checkHistory(tables)
        // With `once`, the run ends at the store's head as it starts: a
        // shipper beside busy writers does not chase them for ever.
        var storeHead = try store.headAndLink().position
        while true {
            try Task.checkCancellation()
            func report() -> ShipProgress {
                ShipProgress(stream: stream, epoch: epoch, position: shipped, link: link, storeHead: storeHead,
                             records: totals.records, bytes: totals.bytes,
                             seconds: Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000)
            }
            if once && shipped >= storeHead { return report() }
            let seen = store.commitGeneration
            let limit = once ? min(options.batchRecords, Int(storeHead - shipped)) : options.batchRecords
            let batch = try await store.records(after: shipped, limit: limit, maxBytes: options.batchBytes)
            guard !batch.isEmpty else {
                if once { return report() }
                await store.waitForCommit(after: seen, timeout: options.pollInterval)
                continue
            }
            let shipment = try await extend(batch)
            let last = shipment.last!
            storeHead = max(storeHead, last.position)
            guard try await ship(shipment, epoch: epoch, after: shipped, link: link, tables: tables) else { return nil }
            shipped = last.position
            link = last.link
            positionGauge.record(Int64(clamping: shipped))
            totals.records += UInt64(shipment.count)
            totals.bytes += UInt64(shipment.bytes)
            progress?(report())
        }
    }

    /// The epoch this store ships, creating the stream or taking it over.
    private func establishEpoch(_ tables: StreamTables, takeOver: Bool) async throws -> Int64 {
        if takeOver { return try await self.takeOver(tables) }
        let mine = try store.shippingEpoch(stream: stream)
        if mine == nil, let follow = try store.followState(), follow.stream == stream {
            throw ShippingError(.refused, operation: "ship",
                                "this store follows stream \(stream); a follower ships only after taking over (--take-over) once it has caught up")
        }
        let head = try await tables.head()
        guard let mine else {
            if let head {
                throw ShippingError(.refused, operation: "ship",
                                    "stream \(stream) already exists (\(head)) and this store never shipped to it; allowed: a new stream name, or --take-over from a follower that has caught up")
            }
            try store.setShippingEpoch(1, stream: stream, endingFollow: false)
            try await tables.createHead(epoch: 1)
            return 1
        }
        guard let head else {
            // The stream's rows are gone (a database restored from before
            // it existed): ship the whole log again.
            try await tables.createHead(epoch: mine)
            return mine
        }
        if head.epoch > mine {
            throw ShippingError(.fenced, operation: "ship",
                                "stream \(stream) is at epoch \(head.epoch): another leader took over; this store ships epoch \(mine) and may no longer ship to it")
        }
        if head.epoch < mine {
            throw ShippingError(.diverged, operation: "ship",
                                "stream \(stream) is at epoch \(head.epoch), older than this store's epoch \(mine): the database is older than this store's shipping (restored from a backup?)")
        }
        return mine
    }

    /// A new epoch for a store whose head is the stream's head.
    private func takeOver(_ tables: StreamTables) async throws -> Int64 {
        let local = try store.headAndLink()
        let stream = self.stream
        if let pending = try store.pendingRedactions().first {
            throw ShippingError(.refused, operation: "take over",
                                "this store holds the redaction record at position \(pending.position) as a pending authorization (its log has not reached it yet); follow stream \(stream) up to it first",
                                position: pending.position)
        }
        let logger = options.logger
        let epoch = try await withDeadline(StreamTables.deadline, "take over") { try await tables.connection.inTransaction(logger: logger, operation: "take over") { c -> Int64 in
            guard let head = try await tables.head(on: c, forUpdate: true) else {
                throw ShippingError(.missing, operation: "take over", "there is no stream \(stream) to take over; ship without --take-over to create it")
            }
            guard head.position == local.position, head.link == local.link else {
                throw ShippingError(.refused, operation: "take over",
                                    "this store has not caught up with stream \(stream): its head is \(local.position), the stream's \(head.position)\(head.position == local.position ? " with another link" : ""); run eventlog follow --once first",
                                    position: local.position)
            }
            let epoch = head.epoch + 1
            try await c.query("UPDATE eventlog_streams SET epoch = \(epoch), updated_at = now() WHERE stream = \(stream)", logger: logger)
            return epoch
        } }
        try store.setShippingEpoch(epoch, stream: stream, endingFollow: true)
        options.logger.notice("took over the stream", metadata: ["stream": "\(stream)", "epoch": "\(epoch)", "position": "\(local.position)"])
        return epoch
    }

    /// Checks that PostgreSQL holds a prefix of this store's log and returns
    /// where it ends.
    private func checkHistory(_ tables: StreamTables) async throws -> (Position, ChainLink) {
        guard let head = try await tables.head() else {
            throw ShippingError(.missing, operation: "ship", "stream \(stream) has no head row")
        }
        let local = try store.headAndLink()
        if head.position > local.position {
            throw ShippingError(.diverged, operation: "ship",
                                "stream \(stream)'s head \(head.position) is ahead of this store's head \(local.position): the stream holds records this store does not",
                                position: local.position + 1)
        }
        if head.position > 0 {
            let ours = try store.record(at: head.position)?.link
            guard ours == head.link else {
                throw ShippingError(.diverged, operation: "ship",
                                    "stream \(stream)'s record \(head.position) differs from this store's (its link is \(head.link), ours \(ours.map { "\($0)" } ?? "missing")): a different history",
                                    position: head.position)
            }
        }
        return (head.position, head.link)
    }

    /// `batch`, extended with the records after it up to the redaction
    /// record of every redacted record in it (``Shipment``): a shipper that
    /// lagged across a forget ships the redacted records and their
    /// authorization in one transaction.
    private func extend(_ batch: [LogRecord]) async throws -> Shipment {
        var shipment = Shipment()
        try shipment.add(batch)
        while let waiting = shipment.uncovered.first {
            let next = try await store.records(after: shipment.last!.position, limit: options.batchRecords, maxBytes: options.batchBytes)
            guard !next.isEmpty else {
                throw ShippingError(.refused, operation: "ship",
                                    "this store's record \(waiting) is flagged redacted, but no later redaction record in its log covers it (`eventlog verify` reports it); nothing from position \(batch[0].position) on was shipped",
                                    position: waiting)
            }
            try shipment.add(next)
        }
        return shipment
    }

    /// Ships `shipment` in one transaction; false when the head moved under
    /// this shipper (another shipper of the same store), to start over.
    ///
    /// With the records go their redactions: for each redaction record
    /// shipped, its ranges into `eventlog_redactions`, and the row of every
    /// record it names replaced by the store's redacted bytes (same
    /// position, digest and link: the statement checks them), so that no
    /// row of the stream keeps a payload the leader's log no longer has.
    private func ship(_ shipment: Shipment, epoch: Int64, after shipped: Position, link: ChainLink,
                      tables: StreamTables) async throws -> Bool {
        let stream = self.stream
        let logger = options.logger
        let store = self.store
        let first = shipment.first!.position
        let last = shipment.last!
        let lastLink = ByteBuffer(bytes: last.link.bytes)
        let deadline = StreamTables.deadline * max(1, shipment.chunks.count + shipment.redactions.count)
        return try await withDeadline(deadline, "ship") { try await tables.connection.inTransaction(logger: logger, operation: "ship") { c -> Bool in
            guard let head = try await tables.head(on: c, forUpdate: true) else {
                throw ShippingError(.missing, operation: "ship", "stream \(stream)'s head row disappeared")
            }
            guard head.epoch == epoch else {
                throw ShippingError(.fenced, operation: "ship",
                                    "stream \(stream) is at epoch \(head.epoch): another leader took over; this store ships epoch \(epoch) and may no longer ship to it",
                                    position: first)
            }
            guard head.position == shipped else { return false }
            guard head.link == link else {
                throw ShippingError(.diverged, operation: "ship",
                                    "stream \(stream)'s record \(shipped) has link \(head.link), this store's \(link): a different history",
                                    position: shipped)
            }
            // The dictionaries the records name, before the records (once a stream).
            let named = Set(shipment.chunks.flatMap { $0.compactMap(\.dictionaryID) }.filter { $0 != 0 }).sorted()
            for id in try await tables.missingDictionaries(named, on: c) {
                guard let bytes = try store.dictionary(id) else {
                    throw ShippingError(.refused, operation: "ship", "this store's records name dictionary \(id), which it does not hold", position: first)
                }
                try await tables.insertDictionary(id, bytes, on: c)
            }
            for chunk in shipment.chunks {
                let positions = chunk.map { Int64($0.position) }
                let records = chunk.map { ByteBuffer(bytes: $0.bytes) }
                try await c.query("""
                    INSERT INTO eventlog_records (stream, position, epoch, record)
                    SELECT \(stream), p, \(epoch), r FROM unnest(\(positions)::bigint[], \(records)::bytea[]) AS t(p, r)
                    """, logger: logger)
            }
            for (position, redaction) in shipment.redactions {
                try await tables.recordRedaction(redaction, at: position, on: c)
                for piece in redaction.positions.pieces(of: 10_000) {
                    let redacted = try await store.records(at: piece)
                    if let unredacted = redacted.first(where: { !$0.isRedacted }) {
                        throw ShippingError(.refused, operation: "ship",
                                            "this store's redaction record \(position) names record \(unredacted.position), which is not redacted in its log (`eventlog verify` reports it)",
                                            position: unredacted.position)
                    }
                    try await tables.replaceRecords(redacted, on: c)
                }
            }
            try await c.query("""
                UPDATE eventlog_streams SET position = \(Int64(last.position)), link = \(lastLink), updated_at = now()
                WHERE stream = \(stream)
                """, logger: logger)
            try await c.query("SELECT pg_notify(\(StreamTables.channel), \(stream))", logger: logger)
            return true
        } }
    }
}
