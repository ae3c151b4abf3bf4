import Foundation
import LMDB

/// Group commit: writers that arrive while a transaction is being written
/// wait, and the next transaction carries all of them (up to a limit), so
/// they share one commit and one fsync instead of paying one each.
///
/// The first waiting writer becomes the leader and runs the whole group's
/// closures on its own thread while the others block, as `DispatchQueue.sync`
/// does; when its own request is done it hands leadership on.
final class WriteQueue: @unchecked Sendable {
    /// One writer's closure and outcome. `@unchecked Sendable`: the leader
    /// thread runs `perform` while the submitting thread is blocked in
    /// ``submit(_:execute:)``, and `condition` orders every access.
    final class Request: @unchecked Sendable {
        /// Runs the request in the transaction, appending after the head it
        /// is given (the log's last record there) and moving it past what it appended.
        let perform: (WriteTransaction, inout RecordedHead) throws -> Void
        var error: (any Error)?
        var done = false
        /// The request this one follows in a ``WritePipeline``: when it
        /// failed, this one is not run (it fails with ``EventLogError/Code/pipelineHalted``).
        /// Let go once this one committed, so that a pipeline does not keep
        /// every request (and its closure's commands) it was ever given.
        var predecessor: Request?
        /// The request's position in its pipeline (1 for the first), for messages.
        let sequence: UInt64

        init(after predecessor: Request? = nil, sequence: UInt64 = 0,
             _ perform: @escaping (WriteTransaction, inout RecordedHead) throws -> Void) {
            self.perform = perform
            self.predecessor = predecessor
            self.sequence = sequence
        }

        /// Why this request must not run: its predecessor failed (or was itself halted).
        var haltedBy: (any Error)? {
            guard let predecessor, let failure = predecessor.error else { return nil }
            if let halted = failure as? EventLogError, halted.code == .pipelineHalted { return halted }
            return EventLogError(.pipelineHalted, operation: "append",
                                 "pipelined write \(sequence) was not applied: write \(predecessor.sequence) before it failed (\(failure)); "
                                     + "a pipeline applies nothing after a failed write")
        }
    }

    private let condition = NSCondition()
    private var pending: [Request] = []
    private var leaderActive = false
    /// The thread running a group's closures, while it does.
    private var leaderThread: pthread_t?
    let maxGroup: Int

    init(maxGroup: Int) { self.maxGroup = max(1, maxGroup) }

    /// Queues `request` and returns when it is done; `execute` writes one
    /// group in one transaction and sets each request's `error`.
    ///
    /// A write submitted from inside a write's closure, on the leader's own
    /// thread, would wait for itself forever: it traps instead, as GRDB's
    /// reentrant `write` does, with a message that says what happened.
    func submit(_ request: Request, execute: ([Request]) -> Void) {
        submit([request], execute: execute)
    }

    /// Queues `requests`, in order and together (so that they can share
    /// transactions), and returns when every one is done.
    func submit(_ requests: [Request], execute: ([Request]) -> Void) {
        guard let last = requests.last else { return }
        condition.lock()
        if let leaderThread, pthread_equal(leaderThread, pthread_self()) != 0 {
            condition.unlock()
            fatalError("EventStore.write was called inside a write closure on the same thread: writes are not reentrant "
                + "(the inner write would wait for the outer one forever). Append through the LogBatch the closure was given.")
        }
        pending.append(contentsOf: requests)
        // Groups are taken in order: the last request done means all are.
        while !last.done && leaderActive { condition.wait() }
        if last.done {
            condition.unlock()
            return
        }
        leaderActive = true
        leaderThread = pthread_self()
        while !last.done {
            let group = Array(pending.prefix(maxGroup))
            pending.removeFirst(group.count)
            condition.unlock()
            execute(group)
            condition.lock()
            for member in group { member.done = true }
        }
        leaderActive = false
        leaderThread = nil
        condition.broadcast()
        condition.unlock()
    }
}

/// A value behind a lock, for the little state a `Sendable` engine type keeps.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}
