import Foundation

/// The writes a store has started and not finished, so that closing the
/// store lets them finish: ``EventStore/close()`` stops new ones (they throw
/// ``EventLogError/Code/storeClosed``), waits for these, then closes the
/// environment.
final class WritesInFlight: @unchecked Sendable {
    private let condition = NSCondition()
    private var inFlight = 0
    private var closedError: EventLogError?

    /// Counts a write in; throws once the store is closing.
    func enter() throws {
        condition.lock()
        defer { condition.unlock() }
        if let closedError { throw closedError }
        inFlight += 1
    }

    func leave() {
        condition.lock()
        inFlight -= 1
        if inFlight == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// From now on ``enter()`` throws `error`; returns once every write
    /// counted in has left.
    func close(_ error: EventLogError) {
        condition.lock()
        defer { condition.unlock() }
        if closedError == nil { closedError = error }
        while inFlight > 0 { condition.wait() }
    }

    /// How many writes are counted in.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return inFlight
    }

    /// The error writes throw once the store is closing, else nil.
    var closed: EventLogError? {
        condition.lock()
        defer { condition.unlock() }
        return closedError
    }
}
