import Foundation

/// Wakes tasks waiting for a store's next commit, in this process (and, in
/// `LogShipping`, a follower on a PostgreSQL notification). Each
/// commit that appended moves ``generation``; a waiter states the generation
/// it saw and sleeps until it moves, its timeout passes or it is cancelled.
/// Commits of other processes move nothing here: waiters poll for those (the
/// timeout), and `Docs/Architecture.md` names the delay.
///
/// `@unchecked Sendable`: every access to the state is under `lock`.
public final class CommitSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var current: UInt64 = 0
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter: UInt64 = 0
    /// Waiters woken (timeout, cancellation) before they were registered.
    private var early: Set<UInt64> = []

    public init() {}

    public var generation: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// A commit landed: every waiter wakes.
    public func signal() {
        lock.lock()
        current &+= 1
        let woken = waiters
        waiters.removeAll()
        lock.unlock()
        for continuation in woken.values { continuation.resume() }
    }

    /// Returns when the generation is past `seen`, after `timeout`, or on cancellation.
    public func wait(after seen: UInt64, timeout: Duration) async {
        let id: UInt64? = lock.withLock {
            guard current == seen else { return nil }
            nextWaiter &+= 1
            return nextWaiter
        }
        guard let id else { return }
        let timer = Task { [weak self] in
            do { try await Task.sleep(for: timeout) } catch { return }
            self?.wake(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if current != seen || Task.isCancelled || early.remove(id) != nil {
                    lock.unlock()
                    continuation.resume()
                    return
                }
                waiters[id] = continuation
                lock.unlock()
            }
        } onCancel: {
            wake(id)
        }
        timer.cancel()
        _ = lock.withLock { early.remove(id) }
    }

    private func wake(_ id: UInt64) {
        lock.lock()
        let continuation = waiters.removeValue(forKey: id)
        if continuation == nil { early.insert(id) }
        lock.unlock()
        continuation?.resume()
    }
}
