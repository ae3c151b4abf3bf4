import Foundation

/// Lets many transactions of this process run at once, and one map resize
/// run alone: `mdb_env_set_mapsize` requires that the process has no
/// transaction open. Transactions are short, so the resize waits them out;
/// new transactions wait while it runs.
final class TransactionGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = 0
    private var resizing = false

    func enterShared() {
        condition.lock()
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
        while resizing || open > 0 { condition.wait() }
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
