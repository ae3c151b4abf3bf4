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
///
/// It also closes the environment (``close(_:)``): once every open
/// transaction has ended, `mdb_env_close` runs, and from then on every
/// transaction that would begin throws the error the closer named instead
/// of touching a closed `MDB_env`.
final class TransactionGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = 0
    private var resizing = false
    /// Resizes waiting for the open transactions to end.
    private var waiting = 0
    /// Set once the environment is closed: what every later begin throws.
    private var closedError: (any Error)?

    /// How long a transaction that would begin waits for a pending resize.
    static let shareHold: TimeInterval = 0.05

    /// Enters as one of many; throws once the environment is closed.
    func enterShared() throws {
        condition.lock()
        defer { condition.unlock() }
        if waiting > 0 && !resizing {
            let deadline = Date(timeIntervalSinceNow: Self.shareHold)
            while waiting > 0 && !resizing && condition.wait(until: deadline) {}
        }
        while resizing { condition.wait() }
        if let closedError { throw closedError }
        open += 1
    }

    /// Enters again after a caller left to run ``exclusively(_:)`` in the
    /// middle of its transaction's begin: counted even once closed, so that
    /// the caller's one ``leaveShared()`` balances; the caller then checks
    /// ``closed`` before it touches the handle.
    func reenterShared() {
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

    /// Runs `body` with no other transaction of the process open; throws,
    /// without running it, once the environment is closed.
    func exclusively(_ body: () throws -> Void) throws {
        condition.lock()
        waiting += 1
        while resizing || open > 0 { condition.wait() }
        waiting -= 1
        if let closedError {
            condition.unlock()
            throw closedError
        }
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

    /// Waits until no transaction of the process is open, runs `body` (which
    /// closes the environment) and makes every later ``enterShared()`` and
    /// ``exclusively(_:)`` throw `error`. False, without running `body`,
    /// when the environment was closed already.
    func close(_ error: any Error, _ body: () -> Void) -> Bool {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while resizing || open > 0 { condition.wait() }
        guard closedError == nil else { return false }
        closedError = error
        body()
        return true
    }

    /// The error later transactions throw, once closed.
    var closed: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return closedError
    }
}
