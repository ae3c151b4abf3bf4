import Foundation

/// The events of a run of the log, read and prepared on a thread of their
/// own ahead of the writer that applies them: the second core reads
/// records, copies payloads and runs every projection's
/// ``Projection/prepareAhead(_:)`` (a keyword index tokenizes there) while
/// the writer applies the events before them. A rebuild's loop.
///
/// ```swift
/// let prefetch = EventPrefetch(source: store, after: 0, through: head, projections: views.all)
/// defer { prefetch.cancel() }
/// while let next = try prefetch.next() {
///     for writer in writers { try writer.apply(next.event) }
///     next.release()
/// }
/// ```
///
/// Bounded: at most ``maxEvents`` events or ``maxBytes`` of payload wait
/// ahead of the writer, so memory stays flat and what the projections
/// prepared stays within their own bounds.
///
/// `@unchecked Sendable`: the mutable state is read and written only while
/// `condition` is held.
final class EventPrefetch: @unchecked Sendable {
    /// One event and what its preparations want once it was applied.
    struct Prepared {
        var event: RecordedEvent
        var releases: [@Sendable () -> Void]

        /// Lets go of what the projections prepared for the event.
        func release() {
            for release in releases { release() }
        }
    }

    let maxEvents: Int
    let maxBytes: Int
    private let condition = NSCondition()
    private var ready: [Prepared] = []
    private var head = 0
    private var readyBytes = 0
    private var finished = false
    private var cancelled = false
    private var failure: (any Error)?
    private let done = DispatchGroup()

    /// Starts reading positions `after + 1 ... through` of `source`'s log.
    init<Views>(source: EventStore<Views>, after start: Position, through end: Position, projections: [any Projection],
                maxEvents: Int = 1_024, maxBytes: Int = 2 << 20) {
        self.maxEvents = max(1, maxEvents)
        self.maxBytes = max(1, maxBytes)
        let thread = Thread { [self] in
            defer { done.leave() }
            do {
                // Short read transactions: writers of the live store go on meanwhile.
                try source.forEachEvent(from: start + 1, through: end, chunk: 256) { event in
                    var releases: [@Sendable () -> Void] = []
                    for projection in projections {
                        if let release = projection.prepareAhead(event) { releases.append(release) }
                    }
                    return push(Prepared(event: event, releases: releases))
                }
                finish(nil)
            } catch {
                finish(error)
            }
        }
        thread.stackSize = 8 << 20
        done.enter()
        thread.start()
    }

    /// Waits for room, then queues `prepared`; false once cancelled.
    private func push(_ prepared: Prepared) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && pendingCount > 0 && (pendingCount >= maxEvents || readyBytes >= maxBytes) { condition.wait() }
        if cancelled {
            prepared.release()
            return false
        }
        ready.append(prepared)
        readyBytes += prepared.event.payload.count
        condition.broadcast()
        return true
    }

    private var pendingCount: Int { ready.count - head }

    private func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next event in log order; nil after the last. Throws what reading
    /// the log threw (a gap, a malformed record), once the events before
    /// the failure were taken.
    func next() throws -> Prepared? {
        condition.lock()
        defer { condition.unlock() }
        while pendingCount == 0 && !finished { condition.wait() }
        if pendingCount == 0 {
            if let failure { throw failure }
            return nil
        }
        let prepared = ready[head]
        head += 1
        readyBytes -= prepared.event.payload.count
        if head > 256 && head * 2 > ready.count {
            ready.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return prepared
    }

    /// Stops the reader, waits for it, and lets go of what it prepared and
    /// no one took.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
        done.wait()
        condition.lock()
        let left = ready[head...]
        ready = []
        head = 0
        readyBytes = 0
        condition.unlock()
        for prepared in left { prepared.release() }
    }
}
