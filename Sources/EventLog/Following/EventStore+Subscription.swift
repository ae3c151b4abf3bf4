import Foundation
import LMDB

/// How a subscription reads the log.
public struct SubscriptionOptions: Sendable {
    /// Records per read transaction while catching up, at most.
    public var chunk = 1_000
    /// Bytes of records per read, at most (a single larger record still comes whole).
    public var chunkBytes = 4 << 20
    /// How long a caught-up subscription sleeps before it looks at the log
    /// again when no commit of this process woke it: the bound on how late it
    /// sees another process's commits. Commits through this `EventStore`
    /// wake it at once.
    public var pollInterval: Duration = .milliseconds(100)

    public init() {}
}

extension EventStore {
    /// The records from `position` on, in order, each exactly once: first
    /// those already in the log (read in chunks of short read transactions),
    /// then each new commit as it lands. It never ends by itself; cancel the
    /// task that iterates it to stop.
    ///
    /// A consumer keeps its own checkpoint (the last position it handled,
    /// stored with what it did, in its own transaction) and subscribes from
    /// the next one after a restart.
    ///
    /// ```swift
    /// for try await record in store.subscribe(from: checkpoint + 1) {
    ///     try handle(record.event)
    ///     checkpoint = record.position
    /// }
    /// ```
    ///
    /// Commits made through this `EventStore` wake the subscription at once;
    /// commits of another process (or another `EventStore` on the same
    /// directory) are seen within ``SubscriptionOptions/pollInterval``.
    public func subscribe(from position: Position = 1, options: SubscriptionOptions = SubscriptionOptions()) -> LogSubscription<Views> {
        LogSubscription(batches: LogBatchSubscription(store: self, from: max(position, 1), options: options))
    }

    /// As ``subscribe(from:options:)``, a chunk at a time: each element holds
    /// the records one read found (never empty), for consumers that write
    /// them in batches (a shipper).
    public func subscribeInBatches(from position: Position = 1,
                                   options: SubscriptionOptions = SubscriptionOptions()) -> LogBatchSubscription<Views> {
        LogBatchSubscription(store: self, from: max(position, 1), options: options)
    }

    /// The record at `position` exactly as stored, or nil past the head.
    public func record(at position: Position) throws -> LogRecord? {
        try environment.read { txn in
            try databases.log.withValue(forKey: position, in: txn) { bytes in
                guard RecordLayout.View(bytes: bytes).isWellFormed else {
                    throw EventLogError(.corrupt, operation: "read", "the record is malformed", position: position)
                }
                return LogRecord(trusted: position, bytes: [UInt8](bytes), dictionaries: databases.dictionaries)
            }
        }
    }

    /// Up to `limit` records (and about `maxBytes`) after `position`, exactly
    /// as stored, from one read transaction; empty when `position` is the head.
    public func records(after position: Position, limit: Int = 1_000, maxBytes: Int = 4 << 20) throws -> [LogRecord] {
        try environment.read { txn in
            var result: [LogRecord] = []
            var bytes = 0
            var walk = try LogWalk(databases, from: position + 1, in: txn)
            while result.count < limit, bytes < maxBytes, let (p, value) = try walk.next() {
                guard RecordLayout.View(bytes: value).isWellFormed else {
                    throw EventLogError(.corrupt, operation: "read", "the record is malformed", position: p)
                }
                result.append(LogRecord(trusted: p, bytes: [UInt8](value), dictionaries: databases.dictionaries))
                bytes += value.count
            }
            return result
        }
    }

    /// ``records(after:limit:maxBytes:)``, off the cooperative threads.
    public func records(after position: Position, limit: Int = 1_000, maxBytes: Int = 4 << 20) async throws -> [LogRecord] {
        try await BlockingWork.run { try self.records(after: position, limit: limit, maxBytes: maxBytes) }
    }

    /// The records at `positions`, exactly as stored, in order, from one
    /// read transaction; throws when one is missing. (A shipper reads the
    /// redacted forms of the records a redaction names this way.)
    public func records(at positions: PositionRanges) throws -> [LogRecord] {
        try environment.read { txn in
            var result: [LogRecord] = []
            result.reserveCapacity(Int(min(positions.count, 1 << 20)))
            for position in positions {
                let record: LogRecord? = try databases.log.withValue(forKey: position, in: txn) { bytes in
                    guard RecordLayout.View(bytes: bytes).isWellFormed else {
                        throw EventLogError(.corrupt, operation: "read", "the record is malformed", position: position)
                    }
                    return LogRecord(trusted: position, bytes: [UInt8](bytes), dictionaries: databases.dictionaries)
                }
                guard let record else {
                    throw EventLogError(.corrupt, operation: "read", "position \(position) is missing from the log", position: position)
                }
                result.append(record)
            }
            return result
        }
    }

    /// ``records(at:)``, off the cooperative threads.
    public func records(at positions: PositionRanges) async throws -> [LogRecord] {
        try await BlockingWork.run { try self.records(at: positions) }
    }

    /// The last position and its link. (This and the reads above read the
    /// log alone, so a read-only store serves them whatever its views.)
    public func headAndLink() throws -> (position: Position, link: ChainLink) {
        let head = try environment.read { try databases.head(in: $0) }
        return (head.position, head.link)
    }

    /// Returns when a commit of this `EventStore` lands, after `timeout`, or
    /// on cancellation; `seen` is ``commitGeneration`` read before the caller
    /// last looked at the log, so a commit in between is not missed.
    public func waitForCommit(after seen: UInt64, timeout: Duration) async {
        await commits.wait(after: seen, timeout: timeout)
    }

    /// Moves with every commit of this `EventStore` that appended.
    public var commitGeneration: UInt64 { commits.generation }
}

/// The records of a log from a position on, catching up and then following
/// new commits: ``EventStore/subscribe(from:options:)``.
public struct LogSubscription<Views: ProjectionSet>: AsyncSequence, Sendable {
    public typealias Element = LogRecord
    let batches: LogBatchSubscription<Views>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(batches: batches.makeAsyncIterator())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var batches: LogBatchSubscription<Views>.AsyncIterator
        var buffer: [LogRecord] = []
        var index = 0

        /// The next record; nil only when the iterating task is cancelled.
        public mutating func next() async throws -> LogRecord? {
            if index == buffer.count {
                guard let batch = try await batches.next() else { return nil }
                buffer = batch
                index = 0
            }
            defer { index += 1 }
            return buffer[index]
        }
    }
}

/// ``LogSubscription`` a read at a time: ``EventStore/subscribeInBatches(from:options:)``.
public struct LogBatchSubscription<Views: ProjectionSet>: AsyncSequence, Sendable {
    public typealias Element = [LogRecord]
    let store: EventStore<Views>
    let from: Position
    let options: SubscriptionOptions

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(store: store, next: from, options: options)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let store: EventStore<Views>
        /// The next position to deliver.
        public private(set) var next: Position
        let options: SubscriptionOptions

        /// The next records (at least one); nil only when the task is cancelled.
        public mutating func next() async throws -> [LogRecord]? {
            while !Task.isCancelled {
                let seen = store.commitGeneration
                let records = try await store.records(after: next - 1, limit: options.chunk, maxBytes: options.chunkBytes)
                if let last = records.last {
                    next = last.position + 1
                    return records
                }
                await store.waitForCommit(after: seen, timeout: options.pollInterval)
            }
            return nil
        }
    }
}

extension EventStore {
    /// Returns once the log holds `position` (the store's head is at or past
    /// it): read-your-writes where the write went elsewhere, as to the
    /// leader while this store is a follower, or another process. Throws
    /// ``EventLogError/Code/timedOut`` after `timeout`, saying how far the
    /// store got, and ``EventLogError/Code/storeClosed`` once closed.
    ///
    /// ```swift
    /// let written = try await leader.user("alice").becomeCurrent("a1").positions!.upperBound
    /// try await follower.waitForPosition(written, timeout: .seconds(2))   // reads on the follower now see it
    /// ```
    ///
    /// Commits of this `EventStore` (a follower's appends among them) wake
    /// it at once; those of another process are seen within `pollInterval`.
    public func waitForPosition(_ position: Position, timeout: Duration, pollInterval: Duration = .milliseconds(100)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = commitGeneration
            let head = try head()
            if head >= position { return }
            let now = ContinuousClock.now
            guard now < deadline else {
                throw EventLogError(.timedOut, operation: "wait for position",
                                    "the store's head is at \(head), \(position - head) short of \(position), after \(timeout)",
                                    position: position)
            }
            try Task.checkCancellation()
            await waitForCommit(after: seen, timeout: min(pollInterval, deadline - now))
        }
    }
}
