import Dispatch
import LMDB

/// Where the async face runs the store's blocking reads: a concurrent
/// dispatch queue of its own, so that a read's page faults never hold one
/// of Swift concurrency's cooperative threads. Writes do not come here:
/// an async write waits in the store's group commit as a suspended task.
///
/// ```swift
/// let hits = try await BlockingWork.run { try store.search("coffee", now: now) }
/// ```
public enum BlockingWork {
    static let queue = DispatchQueue(label: "eventlog.blocking", qos: .userInitiated, attributes: .concurrent)

    /// Runs `body` on the queue and resumes the caller with its outcome.
    public static func run<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// The async face of a store, for services. A write is queued in the
/// store's group commit and the task is suspended until the writer thread
/// has committed it: no thread waits for its fsync, so writes from any
/// number of tasks meet in the queue and share commits. A read runs the
/// synchronous one on ``BlockingWork``'s queue. A write, once submitted,
/// is not cancelled: it commits or throws.
///
/// ```swift
/// let receipt = try await store.append([event])
/// let head = try await store.read { txn in try store.head(in: txn) }
/// ```
extension EventStore {
    /// ``write(_:_:)-(_,(LogBatch)->R)``, with the task suspended (no
    /// thread held) until the write is committed or fails.
    @discardableResult
    public func write<R: Sendable>(_ options: WriteOptions = WriteOptions(),
                                   _ body: @escaping @Sendable (LogBatch) throws -> R) async throws -> WriteReceipt<R> {
        try checkWritable(options)
        try writes.enter()
        defer { writes.leave() }
        return try await groupCommit.write(WriteRequest(options, time: transactionTime(options), body))
    }

    /// ``append(_:_:)``, with the task suspended until it is committed.
    @discardableResult
    public func append(_ events: [NewEvent], _ options: WriteOptions = WriteOptions()) async throws -> WriteReceipt<Void> {
        try await write(options) { batch in
            for event in events { try batch.append(event) }
        }
    }

    /// ``appendRecords(_:authorizations:follow:)``, with the task suspended until it is committed.
    @discardableResult
    public func appendRecords(_ records: [LogRecord], authorizations: [LogRecord] = [], follow: FollowState? = nil,
                              dictionaries: [(id: UInt32, bytes: [UInt8])] = []) async throws -> Position {
        let encoded = try follow.map { try Self.encodeFollowState($0) }
        let receipt = try await write { batch in
            try self.appendRecords(records, authorizations: authorizations, follow: encoded, dictionaries: dictionaries, in: batch)
        }
        return receipt.value ?? 0
    }

    /// ``read(_:)``, off the cooperative threads.
    public func read<R: Sendable>(_ body: @escaping @Sendable (ReadTransaction) throws -> R) async throws -> R {
        try await BlockingWork.run { try self.read(body) }
    }

    /// ``records(after:limit:maxBytes:)``, off the cooperative threads.
    public func records(after position: Position, limit: Int = 1_000, maxBytes: Int = 4 << 20) async throws -> [LogRecord] {
        try await BlockingWork.run { try self.records(after: position, limit: limit, maxBytes: maxBytes) }
    }

    /// ``records(at:)``, off the cooperative threads.
    public func records(at positions: PositionRanges) async throws -> [LogRecord] {
        try await BlockingWork.run { try self.records(at: positions) }
    }
}
