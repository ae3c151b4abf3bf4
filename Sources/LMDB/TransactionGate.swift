import Foundation

/// Lets many transactions of this process run at once, and one map resize
/// run alone: `mdb_env_set_mapsize` requires that the process has no
/// transaction open. Transactions are short, so the resize waits them out;
/// new transactions wait while it runs.
///
/// A resize that is waiting goes first: a transaction that would begin
/// meanwhile waits for it (up to ``shareHold``), so that threads that begin
/// read transactions one after another (an indexer reading the log) do not
/// keep the count above zero and starve it. The hold is bounded rather than
/// absolute because a thread may begin a transaction while it holds one of
/// the same environment: it must not wait for a resize that waits for it.
final class TransactionGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = 0
    private var resizing = false
    /// Resizes waiting for the open transactions to end.
    private var waiting = 0

    /// How long a transaction that would begin waits for a pending resize.
    static let shareHold: TimeInterval = 0.05

    func enterShared() {
        condition.lock()
        if waiting > 0 && !resizing {
            let deadline = Date(timeIntervalSinceNow: Self.shareHold)
            while waiting > 0 && !resizing && condition.wait(until: deadline) {}
        }
        while resizing { condition.wait() }
        open += 1
        condition.unlock()
    }

    func leaveShared() {
        condition.lock()
        open -= 1
        if open == 0 { condition.broadcast() }
        condition.unlock()
    }

    func exclusively(_ body: () throws -> Void) throws {
        condition.lock()
        waiting += 1
        while resizing || open > 0 { condition.wait() }
        waiting -= 1
        resizing = true
        condition.unlock()
        defer {
            condition.lock()
            resizing = false
            condition.broadcast()
            condition.unlock()
        }
        try body()
    }
}
