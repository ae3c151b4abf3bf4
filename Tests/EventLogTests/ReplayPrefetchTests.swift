import Crypto
import EventLog
import Foundation
import LMDB
import Testing

/// What the views of ``PreparingViews`` prepared ahead of a rebuild's writer,
/// and what the writer found there. One for the process: a rebuild opens its
/// own instance of the views, which must reach the same ledger.
final class PreparationLedger: @unchecked Sendable {
    static let shared = PreparationLedger()
    private let lock = NSLock()
    private var digests: [Position: [UInt8]] = [:]
    private(set) var hits = 0
    private(set) var misses = 0
    private(set) var preparedEvents = 0
    /// Events prepared on the rebuild writer's thread (``holdPrefetch(writer:)``).
    private(set) var preparedByWriter = 0
    private var writer: pthread_t?
    private var gate: DispatchSemaphore?
    private var gateTaken = false

    func reset() {
        lock.lock(); defer { lock.unlock() }
        digests = [:]; hits = 0; misses = 0; preparedEvents = 0
        preparedByWriter = 0; writer = nil; gate = nil; gateTaken = false
    }

    /// Makes the prefetch thread's first `prepare` wait until the writer
    /// (the thread `writer`) prepared something itself, or a minute passed.
    func holdPrefetch(writer: pthread_t) {
        lock.lock(); defer { lock.unlock() }
        self.writer = writer
        gate = DispatchSemaphore(value: 0)
        gateTaken = false
    }

    /// Called at the start of every `prepare`.
    func willPrepare(count: Int) {
        lock.lock()
        guard let writer else { return lock.unlock() }
        if pthread_equal(pthread_self(), writer) != 0 {
            preparedByWriter += count
            gate?.signal()
            lock.unlock()
        } else if let held = gate, !gateTaken {
            gateTaken = true   // only the first
            lock.unlock()
            _ = held.wait(timeout: .now() + 60)
        } else {
            lock.unlock()
        }
    }

    func insert(_ prepared: [(Position, [UInt8])]) {
        lock.lock(); defer { lock.unlock() }
        for (position, digest) in prepared { digests[position] = digest }
        preparedEvents += prepared.count
    }

    func remove(_ positions: [Position]) {
        lock.lock(); defer { lock.unlock() }
        for position in positions { digests[position] = nil }
    }

    func take(_ position: Position) -> [UInt8]? {
        lock.lock(); defer { lock.unlock() }
        let found = digests[position]
        if found == nil { misses += 1 } else { hits += 1 }
        return found
    }

    var held: Int {
        lock.lock(); defer { lock.unlock() }
        return digests.count
    }
}

/// Each event's SHA-256, by position: the digest is what `prepare` computes
/// ahead, and the writer computes it itself when it finds none.
struct PayloadDigests: Projection {
    let digests: Database<UInt64, [UInt8]>
    var name: String { "test.payloadDigests" }
    var version: UInt32 { 1 }
    var databaseNames: [String] { ["test.payloadDigests"] }

    init(openingIn txn: WriteTransaction) throws { digests = try txn.createDatabase("test.payloadDigests") }

    static func digest(_ payload: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: payload)) }

    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in
            let digest = PreparationLedger.shared.take(event.position) ?? Self.digest(event.payload)
            try digests.put(digest, forKey: event.position, in: txn)
        }
    }
}

struct PreparingViews: ProjectionSet {
    let digests: PayloadDigests
    init(openingIn txn: WriteTransaction) throws { digests = try PayloadDigests(openingIn: txn) }
    var all: [any Projection] { [digests] }

    func prepare(_ events: [RecordedEvent]) -> PreparedEvents? {
        let ledger = PreparationLedger.shared
        ledger.willPrepare(count: events.count)
        ledger.insert(events.map { ($0.position, PayloadDigests.digest($0.payload)) })
        let positions = events.map(\.position)
        return PreparedEvents { ledger.remove(positions) }
    }
}

@Suite("A rebuild prepares the log ahead of its writer", .serialized)
struct ReplayPrefetchTests {
    @Test("every event is prepared before the writer applies it, once, and released after; one event larger than the read-ahead window does not stall it")
    func everyEventPreparedAheadAndReleased() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<PreparingViews>(path: dir.path, options: fastOptions())
        // About 29 MB of payload: several rebuild chunks (4 MiB) and a
        // read-ahead window (16 MiB), with one event of 17 MiB in the middle.
        for n in 0..<400 {
            try store.append([event("test.sized", n, size: n == 200 ? 17 << 20 : 30_000)])
        }
        let ledger = PreparationLedger.shared
        ledger.reset()
        let comparison = try store.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
        #expect(comparison.report.eventsApplied == 400)
        // Prepared ahead and found by the writer, every one, none twice.
        #expect(ledger.hits == 400 && ledger.misses == 0, "hits \(ledger.hits), misses \(ledger.misses)")
        #expect(ledger.preparedEvents == 400)
        // And all of it forgotten once the rebuild ended.
        #expect(ledger.held == 0)
    }

    @Test("a writer that would wait for the prefetch thread prepares events itself, and none is prepared twice")
    func writerSharesThePreparation() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<PreparingViews>(path: dir.path, options: fastOptions())
        // 100 KB events: one a slot.
        for n in 0..<120 { try store.append([event("test.sized", n, size: 100_000)]) }
        let ledger = PreparationLedger.shared
        ledger.reset()
        // The prefetch thread is stuck on its first event until the writer
        // has prepared one: a writer that only waited would wait a minute,
        // then find that it prepared nothing.
        ledger.holdPrefetch(writer: pthread_self())
        let comparison = try store.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
        #expect(ledger.preparedByWriter > 0)
        #expect(ledger.preparedByWriter < 120, "the prefetch thread prepared nothing")
        #expect(ledger.hits == 120 && ledger.misses == 0, "hits \(ledger.hits), misses \(ledger.misses)")
        #expect(ledger.preparedEvents == 120)
        #expect(ledger.held == 0)
    }

    @Test("rebuildReadAhead 0: the writer does all the work on its own thread, to the same views; a negative size is refused")
    func noReadAhead() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.rebuildReadAhead = 0
        let store = try EventStore<PreparingViews>(path: dir.path, options: options)
        for n in 0..<50 { try store.append([event("test.sized", n, size: 10_000)]) }
        let ledger = PreparationLedger.shared
        ledger.reset()
        let comparison = try store.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
        #expect(ledger.preparedEvents == 0 && ledger.misses == 50)

        options.rebuildReadAhead = -1
        #expect {
            _ = try EventStore<PreparingViews>(path: dir.path, options: options)
        } throws: { error in
            (error as? EventLogError)?.code == .invalidArgument
                && "\(error)".contains("rebuildReadAhead is -1; it must be 0 (no read-ahead) or more bytes")
        }
    }

    @Test("a rebuild stopped by a writer's error releases what was prepared, and the next one starts clean")
    func failedRebuildReleases() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<PreparingViews>(path: dir.path, options: fastOptions())
        for n in 0..<300 { try store.append([event("test.sized", n, size: 40_000)]) }
        // A damaged record in the middle: the writer stops there with an error.
        let env = store.environment
        try env.write { txn in
            let log: Database<UInt64, [UInt8]> = try txn.openDatabase("log")
            var bytes = try #require(try log.get(150, in: txn))
            bytes.removeLast(100)
            try log.put(bytes, forKey: 150, in: txn)
        }
        let ledger = PreparationLedger.shared
        ledger.reset()
        #expect(throws: (any Error).self) { try store.rebuild(full: true) }
        #expect(ledger.held == 0)
    }
}
