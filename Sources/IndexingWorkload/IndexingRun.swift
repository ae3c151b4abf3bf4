import ActivityDomain
import EventLog
import Foundation
import LMDB

/// One setting of the indexing benchmark: how items are committed.
public struct IndexingSetting: Sendable, Codable, Equatable {
    public var batchSize: Int
    public var durability: Durability
    /// Threads indexing at once, each taking the next batch; their commits
    /// share transactions and fsyncs (group commit).
    public var writers: Int

    public init(batchSize: Int, durability: Durability = .durable, writers: Int = 1) {
        self.batchSize = batchSize
        self.durability = durability
        self.writers = writers
    }
}

/// Where the items come from.
public enum ItemSource: Sendable, Equatable {
    /// A JSON Lines file (`.gz` accepted), streamed.
    case corpus(path: String, limit: Int?)
    /// ``ItemGenerator`` items.
    case generated(count: Int, seed: UInt64)
}

/// What one setting measured.
public struct IndexingResult: Sendable, Codable, Equatable {
    public var setting: IndexingSetting
    public var items: Int
    public var seconds: Double
    public var itemsPerSecond: Double
    /// Megabytes (10⁶ bytes) of item text (titles, names, descriptions, keywords) per second.
    public var megabytesPerSecond: Double
    public var commitLatency: LatencySummary
    /// The process's resident high-water mark (VmHWM), bytes.
    public var peakResidentBytes: Int
    /// Bytes the store's files occupy on disk.
    public var bytesOnDisk: Int
    /// A full rebuild of every view from the log, in a scratch environment.
    public var replaySeconds: Double
    public var replayEventsPerSecond: Double
    /// The rebuilt views equal the live ones byte for byte.
    public var replayVerified: Bool
    /// Latency of the given queries, when there were any.
    public var queries: QueryLatency?
}

/// Milliseconds.
public struct LatencySummary: Sendable, Codable, Equatable {
    public var p50: Double
    public var p99: Double
    public var max: Double

    public init(_ samples: [Double]) {
        let sorted = samples.sorted()
        p50 = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        max = sorted.last ?? 0
    }
}

/// Latency of free-text queries over the indexed store, microseconds.
public struct QueryLatency: Sendable, Codable, Equatable {
    public var count: Int
    public var withHits: Int
    public var p50Microseconds: Double
    public var p99Microseconds: Double
}

/// Indexes `source` into a fresh store at `path` with `setting`, then
/// measures a full replay and, given queries, their latency.
///
/// ```swift
/// let result = try IndexingRun.run(IndexingSetting(batchSize: 500), source: .generated(count: 10_000, seed: 1),
///                                  storePath: "/tmp/bench-store")
/// print(result.itemsPerSecond, result.commitLatency.p99)
/// ```
public enum IndexingRun {
    public static func run(_ setting: IndexingSetting, source: ItemSource, storePath: String, queries: [String] = [],
                           progress: (@Sendable (Int) -> Void)? = nil) throws -> IndexingResult {
        var options = ActivityStoreOptions()
        options.store.durability = setting.durability
        let store = try ActivityStore(path: storePath, options: options)
        let feed = try BatchFeed(source: source, batchSize: setting.batchSize)
        let clock = ContinuousClock()
        let started = clock.now
        let outcome = Outcome()
        let threads = (0..<max(1, setting.writers)).map { _ in
            Thread {
                do {
                    while let batch = try feed.next() {
                        let before = clock.now
                        try store.indexSearchableItems(batch.items)
                        outcome.record(items: batch.items.count, textBytes: batch.textBytes,
                                       latency: (clock.now - before).milliseconds)
                        progress?(outcome.items)
                    }
                } catch {
                    outcome.fail(error)
                }
                outcome.finished()
            }
        }
        for thread in threads { thread.stackSize = 8 << 20; thread.start() }
        outcome.waitFor(threads.count)
        if let error = outcome.error { throw error }
        let seconds = (clock.now - started).seconds

        let replay = try store.eventStore.verifyViews(full: true)
        var latency: QueryLatency?
        if !queries.isEmpty { latency = try measure(queries, on: store) }
        return IndexingResult(
            setting: setting, items: outcome.items, seconds: seconds,
            itemsPerSecond: Double(outcome.items) / seconds,
            megabytesPerSecond: Double(outcome.textBytes) / 1e6 / seconds,
            commitLatency: LatencySummary(outcome.latencies),
            peakResidentBytes: ResidentMemory.peak(),
            bytesOnDisk: DiskUsage.bytes(under: storePath),
            replaySeconds: replay.report.seconds,
            replayEventsPerSecond: Double(replay.report.eventsApplied) / max(replay.report.seconds, 1e-9),
            replayVerified: replay.isEqual,
            queries: latency)
    }

    /// Each query once to warm the caches, then each timed once.
    public static func measure(_ queries: [String], on store: ActivityStore, now: Date = Date()) throws -> QueryLatency {
        for query in queries { _ = try store.search(query, now: now) }
        let clock = ContinuousClock()
        var samples: [Double] = []
        var withHits = 0
        for query in queries {
            let before = clock.now
            let hits = try store.search(query, now: now)
            samples.append((clock.now - before).milliseconds * 1000)
            if !hits.isEmpty { withHits += 1 }
        }
        let summary = LatencySummary(samples)
        return QueryLatency(count: queries.count, withHits: withHits, p50Microseconds: summary.p50, p99Microseconds: summary.p99)
    }
}

/// Batches handed to writer threads one at a time.
final class BatchFeed: @unchecked Sendable {
    // `@unchecked`: every access holds `lock`.
    private let lock = NSLock()
    private let reader: CorpusReader?
    private var generator: ItemGenerator?
    private var remaining: Int
    private let batchSize: Int

    init(source: ItemSource, batchSize: Int) throws {
        self.batchSize = max(1, batchSize)
        switch source {
        case .corpus(let path, let limit):
            reader = try CorpusReader(path: path)
            remaining = limit ?? .max
        case .generated(let count, let seed):
            reader = nil
            generator = ItemGenerator(seed: seed)
            remaining = count
        }
    }

    func next() throws -> (items: [SearchableItem], textBytes: Int)? {
        lock.lock()
        defer { lock.unlock() }
        let wanted = min(batchSize, remaining)
        guard wanted > 0 else { return nil }
        let items: [SearchableItem]
        if let reader {
            guard let read = try reader.next(wanted) else { return nil }
            items = read
        } else {
            items = generator!.items(wanted)
        }
        remaining -= items.count
        return (items, items.reduce(0) { $0 + $1.textBytes })
    }
}

/// What the writer threads report, under a lock.
final class Outcome: @unchecked Sendable {
    // `@unchecked`: every access holds `condition`.
    private let condition = NSCondition()
    private(set) var items = 0
    private(set) var textBytes = 0
    private(set) var latencies: [Double] = []
    private(set) var error: (any Error)?
    private var done = 0

    func record(items: Int, textBytes: Int, latency: Double) {
        condition.lock()
        self.items += items
        self.textBytes += textBytes
        latencies.append(latency)
        condition.unlock()
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

extension SearchableItem {
    /// UTF-8 bytes of the item's text: what indexing reads.
    var textBytes: Int {
        let a = attributeSet
        return (a.title?.utf8.count ?? 0) + (a.displayName?.utf8.count ?? 0) + (a.contentDescription?.utf8.count ?? 0)
            + a.keywords.reduce(0) { $0 + $1.utf8.count }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var milliseconds: Double { seconds * 1000 }
}
