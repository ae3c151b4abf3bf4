import Foundation
import LMDB

/// The preparing half of the indexer: reads the log after a position, in
/// short read transactions, has each index projection prepare each event in
/// the transaction it was read in (``Projection/prepare(_:log:)``:
/// decoding it, finding its user's space in the log's views, tokenizing
/// its text), and hands the results over in order, a piece at a time, to
/// the applying thread (``next(waiting:)``).
///
/// ```swift
/// let feed = IndexFeed(log: source, after: applied, readAhead: 16 << 20, end: nil)
/// try feed.start()
/// defer { feed.stop() }
/// while let piece = feed.next(waiting: true) { … apply piece.events with piece.prepared … }
/// ```
///
/// It runs on a thread of its own (the second core), holding at most
/// `readAhead` bytes of payload prepared and not yet taken; with
/// `readAhead` 0 it has no thread, and ``next(waiting:)`` reads and prepares
/// on the caller's. Past the log's head it waits for the next commit
/// (``CommitSignal``; another process's commits within
/// ``LogSource/pollInterval``), unless it was given an `end`, where it stops.
///
/// `@unchecked Sendable`: the mutable state is read and written only while
/// `condition` is locked; the thread alone reads the log.
final class IndexFeed: @unchecked Sendable {
    /// The log the feed reads and what prepares its events.
    struct LogSource: Sendable {
        let environment: Environment
        let databases: LogDatabases
        /// The index's projections, in order.
        let projections: [any Projection]
        let commits: CommitSignal
        /// How late the feed sees a commit of another process, at most.
        var pollInterval: Duration = .milliseconds(20)
    }

    /// Consecutive events with what each projection prepared of them.
    struct Piece: Sendable {
        var events: [RecordedEvent] = []
        /// For each event, what each projection prepared (in the order of
        /// ``LogSource/projections``).
        var prepared: [[(any Sendable)?]] = []
        /// The position and link of the last event (of the piece before it, when empty).
        var last: RecordedHead
        var bytes = 0
        /// Why the event after ``last`` could not be read or prepared, if so:
        /// nothing after it comes.
        var failure: (any Error)?
    }

    let source: LogSource
    let readAhead: Int
    let end: Position?
    /// Told the last position of each piece ``next(waiting:)`` hands over,
    /// on the taking thread (the indexer's backlog: ``Indexer``).
    let onTake: (@Sendable (Position) -> Void)?
    /// A piece holds at most this many events, or this much payload (one
    /// larger event whole): small enough that the applying thread starts
    /// on a write soon after it was read (the lag), large enough that the
    /// hand-over costs nothing against the work (a read transaction, a lock).
    let pieceEvents = 256
    let pieceBytes = 256 << 10

    private let condition = NSCondition()
    private var queue: [Piece] = []
    private var queuedBytes = 0
    /// The last event read.
    private var readThrough: RecordedHead
    private var stopped = false
    /// The thread has read through ``end`` or met a failure: nothing more comes.
    private var exhausted = false
    private var thread: JoinableThread?
    /// Pieces the applying thread is done with (``release(_:)``), freed on
    /// the preparing thread, which allocated them.
    private var released: [[Piece]] = []

    /// A feed of the events after `after` (whose link it is, as the index
    /// recorded it), through `end` when given, else forever.
    init(log source: LogSource, after: RecordedHead, readAhead: Int, end: Position?,
         onTake: (@Sendable (Position) -> Void)? = nil) {
        self.source = source
        self.readAhead = readAhead
        self.end = end
        self.onTake = onTake
        readThrough = after
    }

    /// Starts the preparing thread (none when `readAhead` is 0).
    func start() throws {
        guard readAhead > 0 else { return }
        thread = try JoinableThread(name: "eventlog.index.prepare") { [self] in run() }
    }

    /// Stops the thread and waits for it to end; pieces not taken are dropped.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        source.commits.interruptBlockedWaits()
        thread?.join()
    }

    /// The next piece: one prepared, waiting for it when `waiting`; nil when
    /// none is ready (not `waiting`), when the feed is stopped, or when it
    /// reached its `end`.
    func next(waiting: Bool) -> Piece? {
        let piece = readAhead == 0 ? nextInline(waiting: waiting) : nextQueued(waiting: waiting)
        if let piece, let onTake { onTake(piece.last.position) }
        return piece
    }

    /// Hands back pieces taken from ``next(waiting:)`` and applied: the
    /// preparing thread frees them. Their documents' nested arrays are
    /// about a quarter of the applying thread's instructions when it frees
    /// them itself (memory another thread allocated), and that thread is the
    /// indexer's bound. Without a thread, they are freed here.
    func release(_ pieces: [Piece]) {
        guard readAhead > 0 else { return }
        condition.lock()
        released.append(pieces)
        condition.broadcast()
        condition.unlock()
    }

    private func nextQueued(waiting: Bool) -> Piece? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty {
            if !waiting || stopped || exhausted { return nil }
            condition.wait()
        }
        let piece = queue.removeFirst()
        queuedBytes -= piece.bytes
        condition.broadcast()
        return piece
    }

    // MARK: The thread

    private func run() {
        defer { finish() }
        while true {
            condition.lock()
            while !stopped && queuedBytes >= readAhead && released.isEmpty { condition.wait() }
            var done = released
            released = []
            let (after, stop, full) = (readThrough, stopped, queuedBytes >= readAhead)
            condition.unlock()
            done.removeAll()   // the applied pieces, freed outside the lock
            if stop { return }
            if full { continue }
            if let end, after.position >= end {
                finish()
                return freeReleasedUntilStopped()
            }
            let seen = source.commits.generation
            let piece = read(after: after)
            if piece.events.isEmpty && piece.failure == nil {
                source.commits.waitBlocking(after: seen, timeout: source.pollInterval)
                continue
            }
            condition.lock()
            queue.append(piece)
            queuedBytes += piece.bytes
            readThrough = piece.last
            if piece.failure != nil { exhausted = true }
            condition.broadcast()
            condition.unlock()
            if piece.failure != nil { return freeReleasedUntilStopped() }
        }
    }

    /// Once nothing more is read: frees what the applying thread hands back, until stopped.
    private func freeReleasedUntilStopped() {
        while true {
            condition.lock()
            while !stopped && released.isEmpty { condition.wait() }
            var done = released
            released = []
            let stop = stopped
            condition.unlock()
            done.removeAll()
            if stop { return }
        }
    }

    private func finish() {
        condition.lock()
        exhausted = true
        condition.broadcast()
        condition.unlock()
    }

    /// Without a thread: reads and prepares the next piece on the caller's.
    private func nextInline(waiting: Bool) -> Piece? {
        while true {
            condition.lock()
            let (after, stop, done) = (readThrough, stopped, exhausted)
            condition.unlock()
            if stop || done { return nil }
            if let end, after.position >= end { return nil }
            let seen = source.commits.generation
            let piece = read(after: after)
            if !piece.events.isEmpty || piece.failure != nil {
                condition.lock()
                readThrough = piece.last
                if piece.failure != nil { exhausted = true }
                condition.unlock()
                return piece
            }
            if !waiting || end != nil { return nil }
            source.commits.waitBlocking(after: seen, timeout: source.pollInterval)
        }
    }

    // MARK: Reading

    /// Reads and prepares the events after `after`, up to a piece's size, in
    /// one read transaction of the log. An event that cannot be read or
    /// prepared ends the piece with its failure.
    private func read(after: RecordedHead) -> Piece {
        var piece = Piece(last: after)
        do {
            try source.environment.read { txn in
                let head = try source.databases.head(in: txn).position
                let through = min(head, end ?? head)
                guard through > after.position else { return }
                let log = source.databases.logReader(in: txn)
                try source.databases.forEachRecord(after: after.position, through: through, in: txn) { event, link in
                    let prepared = try ProjectionApplier.prepare(event, for: source.projections, log: log)
                    piece.events.append(event)
                    piece.prepared.append(prepared)
                    piece.last = RecordedHead(position: event.position, link: link)
                    piece.bytes += event.payload.count
                    return piece.events.count < pieceEvents && piece.bytes < pieceBytes
                }
            }
        } catch {
            piece.failure = error
        }
        return piece
    }
}
