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
    /// A lock, and the condition blocked threads wait on (``waitBlocking(after:timeout:)``).
    private let lock = NSCondition()
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
        lock.broadcast()
        lock.unlock()
        for continuation in woken.values { continuation.resume() }
    }

    /// Blocks the calling thread (one that is not a task's: the indexer's)
    /// until the generation is past `seen`, `timeout` passes, or
    /// ``interruptBlockedWaits()`` is called.
    public func waitBlocking(after seen: UInt64, timeout: Duration) {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        lock.lock()
        defer { lock.unlock() }
        let interruptions = self.interruptions
        while current == seen && interruptions == self.interruptions {
            if !lock.wait(until: deadline) { return }
        }
    }

    /// Wakes every thread in ``waitBlocking(after:timeout:)`` without a
    /// commit (the indexer stopping).
    public func interruptBlockedWaits() {
        lock.lock()
        interruptions &+= 1
        lock.broadcast()
        lock.unlock()
    }

    private var interruptions: UInt64 = 0

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
