import Foundation

/// What the writer threads report, under a lock.
final class Outcome: @unchecked Sendable {
    // `@unchecked`: every access holds `condition`.
    private let condition = NSCondition()
    private(set) var items = 0
    private(set) var textBytes = 0
    private(set) var latencies: [Double] = []
    private(set) var error: (any Error)?
    private var done = 0

    /// Returns the items recorded so far, for progress: reading `items`
    /// from a writer thread outside the lock would race.
    func record(items: Int, textBytes: Int, latency: Double) -> Int {
        condition.lock()
        defer { condition.unlock() }
        self.items += items
        self.textBytes += textBytes
        latencies.append(latency)
        return self.items
    }

    func fail(_ error: any Error) {
        condition.lock()
        if self.error == nil { self.error = error }
        condition.unlock()
    }

    func finished() {
        condition.lock()
        done += 1
        condition.broadcast()
        condition.unlock()
    }

    func waitFor(_ count: Int) {
        condition.lock()
        while done < count { condition.wait() }
        condition.unlock()
    }
}
