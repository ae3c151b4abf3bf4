import Dispatch

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
