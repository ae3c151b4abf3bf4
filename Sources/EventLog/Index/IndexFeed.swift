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
/// while let piece = feed.next(waiting: true) {
///     … apply piece.events with piece.prepared …
///     feed.release([piece])
/// }
/// ```
///
/// It runs on threads of its own (``preparers``, two: the preparing is the
/// larger half of the indexer's work, and a backlog, a catch-up or a
/// rebuild has it on both cores), holding at most `readAhead` bytes of
/// payload read and not yet taken. The threads take the pieces in turn: one
/// reads a piece's records while holding ``claiming`` (cheap: a copy of
/// each payload), lets go, and prepares them in the same read transaction
/// while the other reads and prepares the next piece; the pieces are handed
/// over in log order, whichever was prepared first. What a piece holds, and
/// so what the index writes, is the same with one thread or several. With
/// `readAhead` 0 it has no thread, and ``next(waiting:)`` reads and
/// prepares on the caller's. Past the log's head it waits for the next
/// commit (``CommitSignal``; another process's commits within
/// ``LogSource/pollInterval``), unless it was given an `end`, where it stops.
///
/// `@unchecked Sendable`: the mutable state is read and written only while
/// `condition` is locked; the log is read by the preparing threads alone
/// (by the caller's, without them).
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
    /// How many threads prepare (with `readAhead` above 0).
    let preparers: Int
    /// Told the last position of each piece ``next(waiting:)`` hands over,
    /// on the taking thread (the indexer's backlog: ``Indexer``).
    let onTake: (@Sendable (Position) -> Void)?
    /// A piece holds at most this many events, or this much payload (one
    /// larger event whole): small enough that the applying thread starts
    /// on a write soon after it was read (the lag), large enough that the
    /// hand-over costs nothing against the work (a read transaction, a lock).
    let pieceEvents = 256
    let pieceBytes = 256 << 10

    /// Two preparing threads where there are two cores or more.
    static let defaultPreparers = min(2, max(1, ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    /// Held by the preparing thread that reads the next piece's records:
    /// pieces are claimed one after another, in log order.
    private let claiming = NSLock()
    /// Pieces prepared, in log order, not yet taken.
    private var queue: [Piece] = []
    private var queueStart = 0
    /// Payload of the pieces claimed and not yet taken (queued, or being prepared).
    private var heldBytes = 0
    /// Pieces prepared before one claimed ahead of them, by their number.
    private var early: [Int: Piece] = [:]
    /// The number of the next piece to claim, and of the next to queue.
    private var claimed = 0
    private var queued = 0
    /// The last event claimed.
    private var readThrough: RecordedHead
    private var stopped = false
    /// The threads have read through ``end`` or met a failure: no piece is claimed any more.
    private var exhausted = false
    /// A piece with a failure was queued: nothing after it is.
    private var failed = false
    private var threads: [JoinableThread] = []
    /// Pieces the applying thread is done with (``release(_:)``), freed on
    /// a preparing thread.
    private var released: [[Piece]] = []

    /// A feed of the events after `after` (whose link it is, as the index
    /// recorded it), through `end` when given, else forever.
    init(log source: LogSource, after: RecordedHead, readAhead: Int, end: Position?,
         preparers: Int = IndexFeed.defaultPreparers, onTake: (@Sendable (Position) -> Void)? = nil) {
        self.source = source
        self.readAhead = readAhead
        self.end = end
        self.preparers = max(1, preparers)
        self.onTake = onTake
        readThrough = after
    }

    /// Starts the preparing threads (none when `readAhead` is 0).
    func start() throws {
        guard readAhead > 0 else { return }
        for i in 0..<preparers {
            do {
                let thread = try JoinableThread(name: "eventlog.index.prepare\(i)") { [self] in run() }
                // Under the lock: another thread may call stop() meanwhile (the store closing).
                condition.lock()
                threads.append(thread)
                condition.unlock()
            } catch {
                stop()
                throw error
            }
        }
    }

    /// Stops the threads and waits for them to end; pieces not taken are dropped.
    func stop() {
        condition.lock()
        stopped = true
        let threads = self.threads
        condition.broadcast()
        condition.unlock()
        source.commits.interruptBlockedWaits()
        for thread in threads { thread.join() }
    }

    /// The next piece: one prepared, waiting for it when `waiting`; nil when
    /// none is ready (not `waiting`), when the feed is stopped, or when it
    /// reached its `end`.
    func next(waiting: Bool) -> Piece? {
        let piece = readAhead == 0 ? nextInline(waiting: waiting) : nextQueued(waiting: waiting)
        if let piece, let onTake { onTake(piece.last.position) }
        return piece
    }

    /// Hands back pieces taken from ``next(waiting:)`` and applied: a
    /// preparing thread frees them, which made them (their documents'
    /// nested arrays: freed by the applying thread, the indexer's bound,
    /// they were 6 % of its instructions in a rebuild). Without a thread,
    /// they are freed here.
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
        while queueStart == queue.count {
            if !waiting || stopped || (exhausted && queued == claimed) { return nil }
            condition.wait()
        }
        let piece = queue[queueStart]
        queue[queueStart] = Piece(last: piece.last)
        queueStart += 1
        if queueStart == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueStart = 0
        }
        heldBytes -= piece.bytes
        condition.broadcast()
        return piece
    }

    // MARK: The threads

    private func run() {
        while true {
            condition.lock()
            while !stopped && !exhausted && heldBytes >= readAhead && released.isEmpty { condition.wait() }
            var done = released
            released = []
            let (stop, over, full) = (stopped, exhausted, heldBytes >= readAhead)
            condition.unlock()
            done.removeAll()   // the applied pieces, freed outside the lock
            if stop { return }
            if over { return freeReleasedUntilStopped() }
            if full { continue }
            let seen = source.commits.generation
            if !prepareNextPiece() {
                source.commits.waitBlocking(after: seen, timeout: source.pollInterval)
            }
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

    /// What one read transaction of ``prepareNextPiece()`` found.
    private enum Claim {
        /// A piece, numbered in claiming order, prepared, with the payload it was claimed with.
        case piece(number: Int, Piece, claimedBytes: Int)
        /// Nothing after the last piece claimed yet: wait for a commit.
        case nothingYet
        /// The feed reached its end, or stopped: no piece is claimed any more.
        case ended
    }

    /// Claims the next piece, prepares it and queues it in its turn; false
    /// when the log has nothing after the last piece claimed (yet): then wait for a commit.
    private func prepareNextPiece() -> Bool {
        let claimed: Claim
        do {
            claimed = try source.environment.read { txn -> Claim in
                claiming.lock()
                var holding = true
                defer { if holding { claiming.unlock() } }
                condition.lock()
                let (after, over) = (readThrough, exhausted || stopped)
                condition.unlock()
                if over { return .ended }
                if let end, after.position >= end {
                    condition.lock()
                    exhausted = true
                    condition.broadcast()
                    condition.unlock()
                    return .ended
                }
                var links: [ChainLink] = []
                var piece = readRecords(after: after, links: &links, in: txn)
                if piece.events.isEmpty && piece.failure == nil { return .nothingYet }
                let number = claim(piece), bytes = piece.bytes
                claiming.unlock()
                holding = false
                if piece.failure == nil { prepare(&piece, after: after, links: links, in: txn) }
                return .piece(number: number, piece, claimedBytes: bytes)
            }
        } catch {
            claimed = claimFailure(error)
        }
        switch claimed {
        case .piece(let number, let piece, let bytes):
            queue(piece, number: number, claimedBytes: bytes)
            return true
        case .ended:
            return true
        case .nothingYet:
            return false
        }
    }

    /// The read transaction could not begin: a piece of the failure alone
    /// (unless the feed is over).
    private func claimFailure(_ error: any Error) -> Claim {
        claiming.lock()
        defer { claiming.unlock() }
        condition.lock()
        let after = readThrough
        let over = exhausted || stopped
        condition.unlock()
        guard !over else { return .ended }
        var piece = Piece(last: after)
        piece.failure = error
        return .piece(number: claim(piece), piece, claimedBytes: 0)
    }

    /// Under ``claiming``: numbers `piece`, whose records were read, and
    /// moves the feed past it.
    private func claim(_ piece: Piece) -> Int {
        condition.lock()
        defer { condition.unlock() }
        readThrough = piece.last
        heldBytes += piece.bytes
        if piece.failure != nil { exhausted = true }
        claimed += 1
        return claimed - 1
    }

    /// Queues the prepared piece `number` (claimed with `claimedBytes` of
    /// payload, more than it holds when an event could not be prepared) and
    /// every one after it that waited for it; after a piece with a failure, nothing.
    private func queue(_ piece: Piece, number: Int, claimedBytes: Int) {
        var dropped: [Piece] = []
        condition.lock()
        heldBytes -= claimedBytes - piece.bytes
        early[number] = piece
        while let next = early.removeValue(forKey: queued) {
            queued += 1
            if failed {
                heldBytes -= next.bytes
                dropped.append(next)
                continue
            }
            if next.failure != nil {
                failed = true
                exhausted = true
            }
            queue.append(next)
        }
        condition.broadcast()
        condition.unlock()
        dropped.removeAll()
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
        do {
            return try source.environment.read { txn in
                var links: [ChainLink] = []
                var piece = readRecords(after: after, links: &links, in: txn)
                if piece.failure == nil { prepare(&piece, after: after, links: links, in: txn) }
                return piece
            }
        } catch {
            var piece = Piece(last: after)
            piece.failure = error
            return piece
        }
    }

    /// The records after `after`, up to a piece's size, without their
    /// preparing (``Piece/prepared`` empty), and the link of each in
    /// `links`. A record that cannot be read ends the piece with its failure.
    private func readRecords(after: RecordedHead, links: inout [ChainLink], in txn: ReadTransaction) -> Piece {
        var piece = Piece(last: after)
        do {
            let head = try source.databases.head(in: txn).position
            let through = min(head, end ?? head)
            guard through > after.position else { return piece }
            try source.databases.forEachRecord(after: after.position, through: through, in: txn) { event, link in
                piece.events.append(event)
                links.append(link)
                piece.last = RecordedHead(position: event.position, link: link)
                piece.bytes += event.payload.count
                return piece.events.count < pieceEvents && piece.bytes < pieceBytes
            }
        } catch {
            piece.failure = error
        }
        return piece
    }

    /// Prepares the events of `piece` (read after `after` in `txn`, their
    /// links in `links`) in `txn`. An event that cannot be prepared ends the
    /// piece, before it, with its failure.
    private func prepare(_ piece: inout Piece, after: RecordedHead, links: [ChainLink], in txn: ReadTransaction) {
        let log = source.databases.logReader(in: txn)
        piece.prepared.reserveCapacity(piece.events.count)
        for event in piece.events {
            do {
                piece.prepared.append(try ProjectionApplier.prepare(event, for: source.projections, log: log))
            } catch {
                let kept = piece.prepared.count
                piece.events.removeLast(piece.events.count - kept)
                piece.last = kept == 0 ? after : RecordedHead(position: piece.events[kept - 1].position, link: links[kept - 1])
                piece.bytes = piece.events.reduce(0) { $0 + $1.payload.count }
                piece.failure = error
                return
            }
        }
    }
}
