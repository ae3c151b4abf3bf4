import ActivityDomain
import EventLog
import Foundation

/// How long each write takes to become searchable after it was
/// acknowledged: a thread timestamps every commit of the store's indexer
/// (woken by the indexer itself, no polling), the writers record when each
/// write was acknowledged and its last position, and each write's lag is
/// the first index commit that covered that position, less its
/// acknowledgment (0 when the index covered it first).
///
/// ```swift
/// let lag = try SearchableLag(store: store)
/// lag.acknowledged(position)        // in each write's completion
/// let summary = lag.finish()        // milliseconds: p50, p99, max
/// ```
final class SearchableLag: @unchecked Sendable {
    // `@unchecked`: `acks` and `stopped` under `lock`; `commits` is the thread's alone until it is joined.
    private let lock = NSLock()
    private var acks: [(position: Position, at: UInt64)] = []
    private var commits: [(position: Position, at: UInt64)] = []
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)
    private let store: ActivityStore

    init(store: ActivityStore) throws {
        self.store = store
        let start = try store.eventStore.index?.applied() ?? 0
        Thread.detachNewThread { [self] in
            var last = start
            while !isStopped {
                let applied = (try? store.eventStore.waitForIndex(beyond: last, until: Date(timeIntervalSinceNow: 0.1))) ?? last
                if applied > last {
                    commits.append((applied, DispatchTime.now().uptimeNanoseconds))
                    last = applied
                }
            }
            done.signal()
        }
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    /// A write through `position` was acknowledged (durable in the log) now.
    func acknowledged(_ position: Position) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        acks.append((position, now))
        lock.unlock()
    }

    /// Stops the thread; the lag of every acknowledged write, milliseconds.
    func finish() -> LatencySummary {
        lock.lock()
        stopped = true
        lock.unlock()
        done.wait()
        let sortedAcks = acks.sorted { $0.position < $1.position }
        var lags: [Double] = []
        var c = 0
        for ack in sortedAcks {
            while c < commits.count && commits[c].position < ack.position { c += 1 }
            guard c < commits.count else { break }
            let searchable = commits[c].at
            lags.append(searchable > ack.at ? Double(searchable - ack.at) / 1e6 : 0)
        }
        return LatencySummary(lags)
    }
}
