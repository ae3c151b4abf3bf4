import Foundation

/// The peak of ``ResidentMemory/anonymous()`` over a run, sampled every
/// 10 ms on a thread of its own (reading `/proc/self/status` costs about
/// 20 µs: nothing the run notices).
final class MemorySampler: @unchecked Sendable {
    // `@unchecked`: `peak` and `running` are accessed holding `condition`.
    private let condition = NSCondition()
    private var peak = 0
    private var running = true
    private var stopped = false

    init() {
        let thread = Thread { [self] in
            while true {
                let now = ResidentMemory.anonymous()
                condition.lock()
                peak = max(peak, now)
                if !running {
                    stopped = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                _ = condition.wait(until: Date(timeIntervalSinceNow: 0.01))
                condition.unlock()
            }
        }
        thread.start()
    }

    /// The peak so far, bytes, with a sample taken now.
    func peakSoFar() -> Int {
        let now = ResidentMemory.anonymous()
        condition.lock()
        defer { condition.unlock() }
        peak = max(peak, now)
        return peak
    }

    /// Stops sampling (after one last sample) and returns the peak, bytes.
    func stop() -> Int {
        condition.lock()
        defer { condition.unlock() }
        running = false
        condition.broadcast()
        while !stopped { condition.wait() }
        return peak
    }
}
