import Foundation
import LMDB

/// An index environment the indexer's applying half writes: the store's
/// own, a rebuild's scratch one, or a time-travel copy's. One write
/// transaction applies the pieces an ``IndexFeed`` prepared, as many as
/// ``IndexTransactionLimits`` allow, and moves the index's checkpoint (the
/// position and link of the last record) in the same transaction.
struct IndexTarget {
    let environment: Environment
    let databases: IndexDatabases
    let projections: [any Projection]

    /// Thrown when the index's checkpoint is not where the caller's pieces
    /// follow on: another process's indexer (or a rebuild's swap) moved it.
    struct Moved: Error {
        let to: RecordedHead
    }

    /// Applies `first` and then, in the same transaction, the pieces `feed`
    /// has ready, until `limits` or the feed runs dry; commits; returns the
    /// new checkpoint. `expected` is the checkpoint the pieces follow on:
    /// when the transaction finds another, nothing is written and it throws
    /// ``Moved``. A piece that ends with a failure is applied up to it and
    /// committed, then the failure is thrown (``IndexFailure``). The pieces
    /// applied go back to the feed to be freed (``IndexFeed/release(_:)``).
    func apply(_ first: IndexFeed.Piece, thenFrom feed: IndexFeed, expecting expected: RecordedHead,
               limits: IndexTransactionLimits, log: IndexFeed.LogSource) throws -> RecordedHead {
        if first.events.isEmpty, let failure = first.failure {
            throw IndexFailure(position: first.last.position + 1, error: failure)
        }
        // Outside the transaction: when the map grows, the write runs again and must apply again
        // every piece it took from the feed, which gives each piece once.
        var taken = [first]
        let (head, failure) = try environment.write { txn -> (RecordedHead, (any Error)?) in
            // What makes two indexers (two processes) safe: the write lock orders them, this refuses the second.
            let stored = try databases.applied(in: txn)
            guard stored == expected else { throw Moved(to: stored) }
            return try apply(&taken, thenFrom: feed, in: txn, limits: limits, log: log)
        }
        feed.release(taken)
        if let failure { throw IndexFailure(position: head.position + 1, error: failure) }
        return head
    }

    /// ``apply(_:thenFrom:expecting:limits:log:)`` in `txn`, without the
    /// commit: the pieces, then the checkpoint. Returns it, and the failure
    /// that ended the last piece, if one did.
    ///
    /// The log is read (for what the writers read of earlier payloads) in
    /// a fresh read transaction at each round, begun after the pieces it
    /// applies were read, so that it sees every record they name. A write
    /// that runs again after the map grew applies the same pieces again.
    func apply(_ first: IndexFeed.Piece, thenFrom feed: IndexFeed, in txn: WriteTransaction,
               limits: IndexTransactionLimits, log: IndexFeed.LogSource) throws -> (RecordedHead, (any Error)?) {
        var taken = [first]
        return try apply(&taken, thenFrom: feed, in: txn, limits: limits, log: log)
    }

    /// ``apply(_:thenFrom:in:limits:log:)`` of the pieces in `taken` (taken
    /// from `feed` by an earlier run of the same transaction, which the map's
    /// growth undid), then of more from `feed`, each appended to `taken`.
    private func apply(_ taken: inout [IndexFeed.Piece], thenFrom feed: IndexFeed, in txn: WriteTransaction,
                       limits: IndexTransactionLimits, log: IndexFeed.LogSource) throws -> (RecordedHead, (any Error)?) {
        let slot = LogTransactionSlot()
        let reader = LogReader(payloads: LogPayloads(log.databases.log, dictionaries: log.databases.dictionaries, in: log.environment), slot: slot)
        let started = DispatchTime.now().uptimeNanoseconds
        let applier = try ProjectionApplier(projections, in: txn, log: reader)
        var round = 0, events = 0, bytes = 0
        while true {
            let pieces = taken[round...]
            round = taken.count
            try log.environment.read { logTxn in
                try slot.with(logTxn) {
                    for piece in pieces {
                        for (event, prepared) in zip(piece.events, piece.prepared) {
                            try applier.apply(event, prepared: prepared)
                        }
                        events += piece.events.count
                        bytes += piece.bytes
                    }
                }
            }
            if taken.last!.failure != nil || limits.reached(events: events, bytes: bytes, since: started) { break }
            guard let more = feed.next(waiting: limits.waitsForPieces) else { break }
            taken.append(more)
        }
        try log.environment.read { logTxn in try slot.with(logTxn) { try applier.finish() } }
        let last = taken.last!.last
        try databases.setApplied(last, in: txn)
        try databases.checkpoints.set(projections, to: last.position, in: txn)
        return (last, taken.last!.failure)
    }
}

/// How large one transaction of the indexer grows: it commits once it
/// applied this many events, or this much payload, or ran this long; and,
/// unless it ``waitsForPieces``, as soon as nothing more is prepared (so
/// that a searchable write waits for no more than the transaction it is in).
public struct IndexTransactionLimits: Sendable, Equatable {
    public var events: Int
    public var bytes: Int
    public var duration: Duration
    /// Wait for the next piece rather than commit when none is ready: the
    /// transactions then end where the counts say, the same in every run
    /// (rebuilds), not where the threads' timing has them.
    public var waitsForPieces: Bool
    /// The least time from one transaction's start to the next one's, so
    /// that small writes arriving one after another share a transaction
    /// (and its two fsyncs, on the disk the log's commits wait for) rather
    /// than each having one. Live indexing only (``Indexer``).
    public var minimumInterval: Duration

    public init(events: Int, bytes: Int, duration: Duration, waitsForPieces: Bool = false, minimumInterval: Duration = .zero) {
        self.events = events
        self.bytes = bytes
        self.duration = duration
        self.waitsForPieces = waitsForPieces
        self.minimumInterval = minimumInterval
    }

    /// Live indexing: short enough that a write is searchable within tens of
    /// milliseconds. The duration counts the applying, not the writing of
    /// what the writers held back or the commit, which about double it. A
    /// transaction starts at least 10 ms after the one before: one caller
    /// writing single items then shares each index commit among about two
    /// writes or more, and its own commits wait less for the disk.
    public static let live = IndexTransactionLimits(events: 20_000, bytes: 32 << 20, duration: .milliseconds(15),
                                                    minimumInterval: .milliseconds(10))
    /// Rebuilds and time travel: as large as memory allows, cut by counts alone.
    public static let rebuild = IndexTransactionLimits(events: 20_000, bytes: 16 << 20, duration: .seconds(1_000_000), waitsForPieces: true)
    /// One transaction whatever it holds (a rebuild's swap).
    static let unbounded = IndexTransactionLimits(events: .max, bytes: .max, duration: .seconds(1_000_000), waitsForPieces: true)

    func reached(events: Int, bytes: Int, since started: UInt64) -> Bool {
        if events >= self.events || bytes >= self.bytes { return true }
        return DispatchTime.now().uptimeNanoseconds - started >= duration.nanoseconds
    }
}

/// The indexer could not read or prepare the event at ``position``.
public struct IndexFailure: Error, CustomStringConvertible, Sendable {
    public let position: Position
    public let error: any Error

    public var description: String { "the index cannot apply position \(position): \(error)" }
}
