import Foundation

/// Runs `operation`, or throws a transient ``ShippingError`` when it takes
/// longer than `limit` (and cancels it). PostgreSQL work is bounded so that a
/// server that vanished without closing the socket, or a connection attempt
/// that never completes, turns into a retry instead of a silent stall.
///
/// The caller resumes at the deadline even when `operation` ignores its
/// cancellation: a connection whose socket write failed can leave a query's
/// future pending for ever (found by the fault sweep: `ship` hung), and a
/// task group would wait for it. Such an operation is abandoned; closing its
/// connection (``closeWithoutWaiting(_:)``) lets it end later.
func withDeadline<T: Sendable>(_ limit: Duration, _ what: String,
                               _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation,
                       work: Task { race.finish(await Result(catching: operation)) },
                       timer: Task {
                           try await Task.sleep(for: limit)
                           race.finish(.failure(ShippingError(.unavailable, operation: what, "no answer from PostgreSQL within \(limit)")))
                       })
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first of the operation, the deadline and a cancellation resumes the
/// caller; the others are cancelled.
private final class DeadlineRace<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var outcome: Result<T, any Error>?
    private var tasks: [Task<Void, any Error>] = []

    func start(_ continuation: CheckedContinuation<T, any Error>, work: Task<Void, any Error>, timer: Task<Void, any Error>) {
        lock.lock()
        if let outcome {
            // Finished (or cancelled) before it started: resume at once.
            lock.unlock()
            work.cancel()
            timer.cancel()
            continuation.resume(with: outcome)
            return
        }
        self.continuation = continuation
        tasks = [work, timer]
        lock.unlock()
    }

    func finish(_ result: Result<T, any Error>) {
        lock.lock()
        guard outcome == nil else {
            lock.unlock()
            return
        }
        outcome = result
        let continuation = self.continuation
        self.continuation = nil
        let tasks = self.tasks
        lock.unlock()
        for task in tasks { task.cancel() }
        continuation?.resume(with: result)
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing body.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
