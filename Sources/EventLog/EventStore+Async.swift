import Dispatch
import LMDB

/// Where the async face runs the store's blocking work: a concurrent
/// dispatch queue of its own, so that a commit's fsync (or a read's page
/// faults) never holds one of Swift concurrency's cooperative threads.
/// Writes still meet in the store's write queue and share commits.
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

/// The async face of a store, for services: each call runs the synchronous
/// one on a dispatch queue (as GRDB's async `write` does) and resumes the
/// caller when it is done, so no cooperative thread waits for an fsync.
/// A write, once started, is not cancelled: it commits or throws.
///
/// ```swift
/// let receipt = try await store.append([event])
/// let head = try await store.read { txn in try store.head(in: txn) }
/// ```
extension EventStore {
    /// ``write(_:_:)-(_,(LogBatch)->R)``, off the cooperative threads.
    @discardableResult
    public func write<R: Sendable>(_ options: WriteOptions = WriteOptions(),
                                   _ body: @escaping @Sendable (LogBatch) throws -> R) async throws -> WriteReceipt<R> {
        try await BlockingWork.run { try self.write(options, body) }
    }

    /// ``append(_:_:)``, off the cooperative threads.
    @discardableResult
    public func append(_ events: [NewEvent], _ options: WriteOptions = WriteOptions()) async throws -> WriteReceipt<Void> {
        try await BlockingWork.run { try self.append(events, options) }
    }

    /// ``appendRecords(_:authorizations:follow:)``, off the cooperative threads.
    @discardableResult
    public func appendRecords(_ records: [LogRecord], authorizations: [LogRecord] = [], follow: FollowState? = nil) async throws -> Position {
        try await BlockingWork.run { try self.appendRecords(records, authorizations: authorizations, follow: follow) }
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
