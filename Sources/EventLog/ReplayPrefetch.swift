import Foundation
import LMDB

/// Reads the log ahead of a rebuild's writer, on a thread of its own, and
/// hands it to ``ProjectionSet/prepare(_:)`` a slot at a time (one event,
/// or a few small ones), so that what the views can do from the events
/// alone (decoding, tokenizing) runs on a second core while the writer
/// applies and commits the events before.
///
/// ```swift
/// let prefetch = ReplayPrefetch(source: store, views: views, after: 0, through: head)
/// defer { prefetch.stop() }
/// prefetch.waitUntilPrepared(through: event.position)   // the writer, before each event
/// prefetch.release(through: committed)                   // after each commit
/// ```
///
/// The two threads meet in the middle (as the activity domain's live writes
/// share out a batch's documents): the thread prepares slots from the front of what it read,
/// and a writer that would wait for the slot the thread is on prepares the
/// last slot read instead, then looks again. So neither core idles while
/// there is work, and no slot is prepared twice.
///
/// It reads at most ``windowBytes`` of payload not yet committed, unless
/// the writer waits for an event past that (the writer's chunk may be
/// larger than the window). The thread never waits for the writer: it does
/// not adopt a map another process grew (``readPiece(after:bytes:)``; the
/// torture test hung on that once). What it prepares is a hint (the writer
/// does the work itself when it finds nothing), so a failure here only
/// stops the prefetch: the writer reads the log itself and reports what is
/// wrong with it.
///
/// `@unchecked Sendable`: the mutable state is read and written only while
/// `condition` is locked; the other stored properties are immutable.
final class ReplayPrefetch<Views: ProjectionSet>: @unchecked Sendable {
    let source: EventStore<Views>
    let views: Views
    let end: Position
    /// Payload read ahead and not yet released, past which the thread waits.
    let windowBytes: Int
    /// Payload read in one transaction (the first ones are smaller).
    let pieceBytes: Int
    /// Payload handed to one `prepare` call, unless one event is larger: the
    /// unit the two threads share out.
    let slotBytes: Int

    /// Consecutive events read, and what became of them.
    private struct Slot {
        enum State {
            /// Read, not yet prepared by either thread.
            case waiting([RecordedEvent])
            /// One of the threads is preparing it.
            case claimed
            case prepared(PreparedEvents?)
        }
        let first: Position
        let last: Position
        let bytes: Int
        var state: State

        var isWaiting: Bool {
            if case .waiting = state { return true }
            return false
        }
    }

    private let condition = NSCondition()
    /// In position order, from the first not yet released.
    private var slots: [Slot] = []
    /// The last event read.
    private var readThrough: Position
    /// Payload of the slots that wait for either thread.
    private var waitingBytes = 0
    /// The event the writer is on: the thread does not read what it passed,
    /// and reads past the window while the writer waits beyond what it read
    /// (`writerAt > readThrough`).
    private var writerAt: Position = 0
    /// Another process grew the map: the thread reads again after the
    /// writer's next commit (``readUnlessResized``), and the writer does not
    /// wait for it meanwhile.
    private var waitingForResize = false
    /// Commits the writer reported (``release(through:)``).
    private var commits = 0
    /// Slots the writer committed, for the thread to release: it allocated
    /// most of them, and freeing on the writer's thread cost the writer ~10 %.
    private var retired: [PreparedEvents] = []
    private var heldBytes = 0
    private var stopping = false
    /// The thread reads nothing more (it reached `end`, or the log could not be read).
    private var readingEnded = false
    private let thread = DispatchGroup()

    /// Starts reading the events after `start` through `end`.
    init(source: EventStore<Views>, views: Views, after start: Position, through end: Position,
         windowBytes: Int = 16 << 20, pieceBytes: Int = 1 << 20, slotBytes: Int = 64 << 10) {
        self.source = source
        self.views = views
        self.end = end
        self.windowBytes = windowBytes
        self.pieceBytes = pieceBytes
        self.slotBytes = slotBytes
        readThrough = start
        DispatchQueue.global(qos: .userInitiated).async(group: thread) { [self] in run() }
    }

    /// Whether the thread may read now (`condition` locked).
    private var mayRead: Bool {
        !readingEnded && !waitingForResize && (heldBytes < windowBytes || writerAt > readThrough)
    }

    /// Whether reading comes before preparing: some slots should wait at
    /// the back for a writer to take (`condition` locked).
    private var wantsRead: Bool {
        mayRead && (waitingBytes < 2 * pieceBytes || writerAt > readThrough)
    }

    private func run() {
        // Small pieces first, so that the writer starts soon; then larger ones.
        var piece = min(pieceBytes, 64 << 10)
        while true {
            condition.lock()
            while !stopping && retired.isEmpty && !wantsRead && !slots.contains(where: \.isWaiting) {
                condition.wait()
            }
            let stop = stopping, commitsSeen = commits, reads = wantsRead
            // Not what the writer already passed (it applied those without).
            let from = max(readThrough, writerAt > 0 ? writerAt - 1 : 0)
            let done = retired
            retired.removeAll()
            var claimed: (first: Position, events: [RecordedEvent])?
            if !stop && !reads { claimed = claim(fromFront: true) }
            condition.unlock()
            for prepared in done { prepared.release() }
            if stop { return }

            if let claimed {
                let prepared = views.prepare(claimed.events)
                condition.lock()
                record(prepared, forSlotAt: claimed.first)
                condition.unlock()
                continue
            }
            guard reads else { continue }
            let events: [RecordedEvent]
            do {
                events = try readPiece(after: from, bytes: piece)
                piece = min(pieceBytes, 2 * piece)
            } catch LMDBError.mapResized {
                condition.lock()
                waitingForResize = commits == commitsSeen
                condition.broadcast()
                condition.unlock()
                continue
            } catch {
                events = []
            }
            condition.lock()
            append(events)
            if events.isEmpty || readThrough >= end { readingEnded = true }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// About `limit` bytes of payload after `position`, read in a short
    /// transaction (a long one would keep the live store from reusing
    /// pages). It does not adopt a map another process grew: that waits for
    /// every transaction of this process to end, the writer's read of the
    /// log among them, while the writer may be waiting for this thread.
    private func readPiece(after position: Position, bytes limit: Int) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        var bytes = 0
        try source.environment.readUnlessResized { txn in
            try source.forEachRecord(after: position, through: end, in: txn) { event in
                events.append(event)
                bytes += event.payload.count
                return bytes < limit
            }
        }
        return events
    }

    /// Cuts `events` (just read) into slots of about ``slotBytes`` (`condition` locked).
    private func append(_ events: [RecordedEvent]) {
        var start = 0
        while start < events.count {
            var stop = start, bytes = 0
            while stop < events.count && (stop == start || bytes < slotBytes) {
                bytes += events[stop].payload.count
                stop += 1
            }
            slots.append(Slot(first: events[start].position, last: events[stop - 1].position,
                              bytes: bytes, state: .waiting(Array(events[start..<stop]))))
            heldBytes += bytes
            waitingBytes += bytes
            start = stop
        }
        if let last = events.last?.position { readThrough = last }
    }

    /// Takes the first (the thread) or last (a writer that would wait)
    /// waiting slot, for the caller to prepare (`condition` locked).
    private func claim(fromFront: Bool) -> (first: Position, events: [RecordedEvent])? {
        let found = fromFront ? slots.firstIndex(where: \.isWaiting) : slots.lastIndex(where: \.isWaiting)
        return found.map(claim(at:))
    }

    /// Takes the waiting slot at `index` (`condition` locked).
    private func claim(at index: Int) -> (first: Position, events: [RecordedEvent]) {
        guard case .waiting(let events) = slots[index].state else { preconditionFailure("claimed a slot that was not waiting") }
        slots[index].state = .claimed
        waitingBytes -= slots[index].bytes
        return (slots[index].first, events)
    }

    /// Keeps what was prepared for the slot starting at `first`, or retires
    /// it at once when the writer committed the slot meanwhile (`condition`
    /// locked).
    private func record(_ prepared: PreparedEvents?, forSlotAt first: Position) {
        if let index = slots.firstIndex(where: { $0.first == first }) {
            slots[index].state = .prepared(prepared)
        } else if let prepared {
            retired.append(prepared)
        }
        condition.broadcast()
    }

    /// Returns once the events through `position` were prepared, or will not
    /// be (the prefetch read no further, or waits for the writer's next
    /// commit to read again). Meanwhile it prepares, on the writer's thread,
    /// the event at `position` if the thread has not started on it, or
    /// else the last slot read.
    func waitUntilPrepared(through position: Position) {
        condition.lock()
        defer { condition.unlock() }
        writerAt = position
        while true {
            guard let index = slots.firstIndex(where: { $0.last >= position }), slots[index].first <= position else {
                // Not read yet: wait unless it will not be.
                if position > readThrough && !readingEnded && !waitingForResize {
                    condition.broadcast()
                    condition.wait()
                    continue
                }
                return
            }
            let mine: (first: Position, events: [RecordedEvent])
            switch slots[index].state {
            case .prepared:
                return
            case .waiting:
                mine = claim(at: index)
            case .claimed:
                // The thread is on it: take the far end meanwhile.
                guard let other = claim(fromFront: false) else {
                    condition.wait()
                    continue
                }
                mine = other
            }
            condition.unlock()
            let prepared = views.prepare(mine.events)
            condition.lock()
            record(prepared, forSlotAt: mine.first)
        }
    }

    /// Forgets what was prepared for the events through `position` (the
    /// writer committed them), making room to read further.
    func release(through position: Position) {
        condition.lock()
        defer { condition.unlock() }
        commits += 1
        waitingForResize = false
        var passed = 0
        while passed < slots.count, slots[passed].last <= position {
            let slot = slots[passed]
            heldBytes -= slot.bytes
            switch slot.state {
            case .waiting: waitingBytes -= slot.bytes
            case .prepared(let prepared?): retired.append(prepared)
            case .prepared(nil), .claimed: break   // claimed: retired by `record(_:forSlotAt:)` once prepared
            }
            passed += 1
        }
        slots.removeFirst(passed)
        condition.broadcast()
    }

    /// Stops the thread, waits for it, and forgets everything it prepared.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        thread.wait()
        release(through: .max)
        condition.lock()
        let done = retired
        retired.removeAll()
        condition.unlock()
        for prepared in done { prepared.release() }
    }
}
