import Foundation
import LMDB

/// Reads the log ahead of a rebuild's writer, on a thread of its own, and
/// hands it to ``ProjectionSet/prepare(_:)`` a piece at a time, so that
/// what the views can do from the events alone (decoding, tokenizing) runs
/// on a second core while the writer applies and commits the events before.
///
/// ```swift
/// let prefetch = ReplayPrefetch(source: store, views: views, after: 0, through: head)
/// defer { prefetch.stop() }
/// prefetch.waitUntilPrepared(through: event.position)   // the writer, before each event
/// prefetch.release(through: committed)                   // after each commit
/// ```
///
/// It runs ahead by at most ``windowBytes`` of payload not yet committed,
/// unless the writer waits for an event past that (the writer's chunk may
/// be larger than the window). The thread never waits for the writer: it
/// does not adopt a map another process grew (``readPiece(after:bytes:)``; the
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
    /// Payload handed to one `prepare` call (the first ones are smaller).
    let pieceBytes: Int

    private let condition = NSCondition()
    private var preparedThrough: Position
    /// The event the writer is on: the thread does not read what it passed,
    /// and reads past the window while the writer waits beyond what it
    /// prepared (`writerAt > preparedThrough`).
    private var writerAt: Position = 0
    /// Another process grew the map: the thread reads again after the
    /// writer's next commit (``readUnlessResized``), and the writer does not
    /// wait for it meanwhile.
    private var waitingForResize = false
    /// Commits the writer reported (``release(through:)``).
    private var commits = 0
    private var pieces: [(end: Position, bytes: Int, prepared: PreparedEvents?)] = []
    /// Pieces the writer committed, for the thread to release: it allocated
    /// them, and freeing on the writer's thread cost the writer ~10 %.
    private var retired: [PreparedEvents] = []
    private var heldBytes = 0
    private var stopping = false
    /// The thread prepares nothing more (it reached `end`, or the log could not be read).
    private var exhausted = false
    private let thread = DispatchGroup()

    /// Starts reading the events after `start` through `end`.
    init(source: EventStore<Views>, views: Views, after start: Position, through end: Position,
         windowBytes: Int = 16 << 20, pieceBytes: Int = 1 << 20) {
        self.source = source
        self.views = views
        self.end = end
        self.windowBytes = windowBytes
        self.pieceBytes = pieceBytes
        preparedThrough = start
        DispatchQueue.global(qos: .userInitiated).async(group: thread) { [self] in run(after: start) }
    }

    private func run(after start: Position) {
        var position = start
        // Small pieces first, so that the writer starts soon; then larger ones.
        var piece = min(pieceBytes, 64 << 10)
        while true {
            condition.lock()
            while !stopping && retired.isEmpty
                    && (exhausted || waitingForResize || (heldBytes >= windowBytes && writerAt <= preparedThrough)) {
                condition.wait()
            }
            let stop = stopping, commitsSeen = commits
            // Not what the writer already passed (it applied those without).
            let from = max(position, writerAt > 0 ? writerAt - 1 : 0)
            let reads = !exhausted && !waitingForResize && (heldBytes < windowBytes || writerAt > preparedThrough)
            let done = retired
            retired.removeAll()
            condition.unlock()
            for prepared in done { prepared.release() }
            if stop { return }
            guard reads else { continue }

            let events: [RecordedEvent], bytes: Int
            do {
                (events, bytes) = try readPiece(after: from, bytes: piece)
                piece = min(pieceBytes, 2 * piece)
            } catch LMDBError.mapResized {
                condition.lock()
                waitingForResize = commits == commitsSeen
                condition.broadcast()
                condition.unlock()
                continue
            } catch {
                (events, bytes) = ([], 0)
            }
            let prepared = events.isEmpty ? nil : views.prepare(events)
            condition.lock()
            if let last = events.last?.position {
                pieces.append((last, bytes, prepared))
                heldBytes += bytes
                preparedThrough = last
                position = last
            }
            if events.isEmpty || position >= end { exhausted = true }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// About `limit` bytes of payload after `position`, read in a short
    /// transaction (a long one would keep the live store from reusing
    /// pages). It does not adopt a map another process grew: that waits for
    /// every transaction of this process to end, the writer's read of the
    /// log among them, while the writer may be waiting for this thread.
    private func readPiece(after position: Position, bytes limit: Int) throws -> (events: [RecordedEvent], bytes: Int) {
        var events: [RecordedEvent] = []
        var bytes = 0
        try source.environment.readUnlessResized { txn in
            try source.forEachRecord(after: position, through: end, in: txn) { event in
                events.append(event)
                bytes += event.payload.count
                return bytes < limit
            }
        }
        return (events, bytes)
    }

    /// Waits until the events through `position` were prepared, or the
    /// prefetch ended without them, or it waits for the writer's next
    /// commit to read again.
    func waitUntilPrepared(through position: Position) {
        condition.lock()
        defer { condition.unlock() }
        writerAt = position
        guard preparedThrough < position else { return }
        condition.broadcast()
        while preparedThrough < position && !exhausted && !waitingForResize { condition.wait() }
    }

    /// Forgets what was prepared for the events through `position` (the
    /// writer committed them), making room to read further.
    func release(through position: Position) {
        condition.lock()
        defer { condition.unlock() }
        commits += 1
        waitingForResize = false
        while let first = pieces.first, first.end <= position {
            pieces.removeFirst()
            heldBytes -= first.bytes
            if let prepared = first.prepared { retired.append(prepared) }
        }
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
