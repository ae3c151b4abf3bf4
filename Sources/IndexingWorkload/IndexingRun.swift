import ActivityDomain
import EventLog
import Foundation
import LMDB

/// Indexes `source` into a fresh store at `path` with `setting`, then
/// measures a full replay and, given queries, their latency.
///
/// What is timed: indexing until it is searchable, from the first write
/// until the index's checkpoint covers the last one (the index follows the
/// log: a write is acknowledged once it is in the log, searchable once the
/// indexer applied it). Items are read (or generated) a chunk at a time with
/// the clock stopped, as the peers (`shared/tools/peer_bench.py`) load their
/// items before timing; before the clock stops, the index catches up, timed.
/// Chunks are of 100,000 items (``BatchFeed``), so the corpus is timed as one
/// stream, as the searchable rate is defined. Memory stays flat because only
/// one chunk is held at once. Each write's lag, searchable less acknowledged, is
/// measured too (``SearchableLag``).
///
/// ```swift
/// let result = try IndexingRun.run(IndexingSetting(batchSize: 500), source: .generated(count: 10_000, seed: 1),
///                                  storePath: "/tmp/bench-store")
/// print(result.itemsPerSecond, result.commitLatency.p99)
/// ```
public enum IndexingRun {
    /// - Parameters:
    ///   - itemLimit: index at most this many items (`eventlog bench --max-commits`);
    ///     the result says whether the source had more (`capped`).
    ///   - progress: items indexed so far, from a writer thread.
    public static func run(_ setting: IndexingSetting, source: ItemSource, storePath: String, queries: [String] = [],
                           itemLimit: Int? = nil, progress: (@Sendable (Int) -> Void)? = nil) throws -> IndexingResult {
        let sampler = MemorySampler()
        // Stopping twice is harmless: this ends the thread on every error path.
        defer { _ = sampler.stop() }
        let store = try makeStore(path: storePath, durability: setting.durability)
        guard !setting.alternatesRaw || (setting.writers == 1 && setting.pipeline == 0) else {
            throw EventLogError(.invalidArgument, operation: "bench",
                                "raw LMDB's commits alternate with the engine's only with one writer and no pipeline (writers \(setting.writers), pipeline \(setting.pipeline))")
        }
        let raw = setting.alternatesRaw ? try RawCommits(path: storePath + "-raw", durability: setting.durability) : nil
        defer { if raw != nil { try? FileManager.default.removeItem(atPath: storePath + "-raw") } }
        let feed = try BatchFeed(source: source, batchSize: setting.batchSize, writers: max(1, setting.writers),
                                 limit: itemLimit)
        // Searchable before the clock stops: the index catches up, timed.
        feed.beforePause = { try store.eventStore.waitForIndex(timeout: .seconds(3_600)) }
        let lag = try SearchableLag(store: store)
        let outcome = Outcome()
        let spread = setting.users.map(UserSpread.init(count:))
        let threads = (0..<max(1, setting.writers)).map { _ in
            Thread {
                let clock = ContinuousClock()
                let pipeline = setting.pipeline > 0 ? store.pipeline(depth: setting.pipeline) : nil
                do {
                    while let batch = try feed.next() {
                        let before = clock.now
                        // One operation for the batch, or one an item in its user's space.
                        let commands = spread.map { $0.commands(batch.items, first: batch.first) }
                            ?? [ActivityCommand.Timed(.indexSearchableItems(batch.items))]
                        guard let pipeline else {
                            let results = try store.write(commands)
                            if let last = results.last?.positions?.upperBound { lag.acknowledged(last) }
                            let latency = (clock.now - before).milliseconds
                            try raw?.commitOne()
                            let total = outcome.record(items: batch.items.count, textBytes: batch.textBytes, latency: latency)
                            feed.done()
                            progress?(total)
                            continue
                        }
                        // Latency: from hand-over to durable.
                        let (count, textBytes) = (batch.items.count, batch.textBytes)
                        try pipeline.submit(commands) { result in
                            switch result {
                            case .success(let results):
                                if let last = results.last?.positions?.upperBound { lag.acknowledged(last) }
                                let total = outcome.record(items: count, textBytes: textBytes, latency: (clock.now - before).milliseconds)
                                feed.done()
                                progress?(total)
                            case .failure(let error):
                                outcome.fail(error)
                                feed.stop()
                            }
                        }
                    }
                    try pipeline?.waitForAll()
                } catch {
                    outcome.fail(error)
                    feed.stop()
                }
                outcome.finished()
            }
        }
        for thread in threads { thread.stackSize = 8 << 20; thread.start() }
        outcome.waitFor(threads.count)
        let seconds = feed.timedSeconds()
        let searchableLag = lag.finish()
        let transactions = store.eventStore.groupCommitStatistics.transactions
        let indexingPeak = sampler.peakSoFar()
        if let error = outcome.error { throw error }
        let capped = try feed.hasMore()

        let cpuBefore = ProcessCPU.seconds()
        let replay = try store.eventStore.verifyViews(full: true)
        let replayCPU = ProcessCPU.seconds() - cpuBefore
        var latency: QueryLatency?
        if !queries.isEmpty { latency = try measure(queries, on: store, users: spread) }
        let anonymousPeak = max(sampler.stop(), indexingPeak)
        let replaySeconds = max(replay.report.seconds, 1e-9)
        return IndexingResult(
            setting: setting, items: outcome.items, capped: capped, seconds: seconds,
            itemsPerSecond: Double(outcome.items) / seconds,
            megabytesPerSecond: Double(outcome.textBytes) / 1e6 / seconds,
            commits: outcome.latencies.count,
            commitLatency: LatencySummary(outcome.latencies),
            searchableLag: searchableLag,
            transactions: transactions,
            rawLMDB: raw.map { raw in
                let engineSeconds = outcome.latencies.reduce(0, +) / 1000
                let engineRate = engineSeconds > 0 ? Double(outcome.latencies.count) / engineSeconds : 0
                return RawCommitRate(commitsPerSecond: raw.commitsPerSecond,
                                     engineRatio: raw.commitsPerSecond > 0 ? engineRate / raw.commitsPerSecond : 0)
            },
            peakResidentBytes: ResidentMemory.peak(),
            peakAnonymousBytes: anonymousPeak,
            indexingPeakAnonymousBytes: indexingPeak,
            bytesOnDisk: DiskUsage.bytes(under: storePath),
            replaySeconds: replay.report.seconds,
            replayEventsPerSecond: Double(replay.report.eventsApplied) / replaySeconds,
            replayItemsPerSecond: Double(outcome.items) / replaySeconds,
            replayCPUSeconds: replayCPU,
            replayCores: replayCPU / replaySeconds,
            replayVerified: replay.isEqual,
            queries: latency)
    }

    /// A store as the benchmarks use it: the engine's defaults but for `durability`.
    public static func makeStore(path: String, durability: Durability) throws -> ActivityStore {
        var options = ActivityStoreOptions()
        options.store.durability = durability
        return try ActivityStore(path: path, options: options)
    }

    /// Indexes `items` in batches of `batchSize`, one commit each, and
    /// returns once the index has applied them (searchable): the timed loop
    /// of the package benchmarks.
    public static func index(_ items: [SearchableItem], batchSize: Int, into store: ActivityStore) throws {
        var start = 0
        while start < items.count {
            let end = min(items.count, start + max(1, batchSize))
            try store.indexSearchableItems(Array(items[start..<end]))
            start = end
        }
        try store.eventStore.waitForIndex(timeout: .seconds(3_600))
    }

    /// Each query once to warm the caches, then each timed once; with
    /// `users`, query k as user `u{k mod N}` (``UserSpread``), else in the
    /// default space.
    public static func measure(_ queries: [String], on store: ActivityStore, now: Date = Date(),
                               users: UserSpread? = nil) throws -> QueryLatency {
        let spaces = queries.indices.map { k in store.user(users?.user(k) ?? "") }
        for (k, query) in queries.enumerated() { _ = try spaces[k].search(query, now: now) }
        let clock = ContinuousClock()
        var samples: [Double] = []
        var withHits = 0
        for (k, query) in queries.enumerated() {
            let space = spaces[k]
            let before = clock.now
            let hits = try space.search(query, now: now)
            samples.append((clock.now - before).milliseconds * 1000)
            if !hits.isEmpty { withHits += 1 }
        }
        let summary = LatencySummary(samples)
        return QueryLatency(count: queries.count, withHits: withHits, p50Microseconds: summary.p50,
                            p99Microseconds: summary.p99, maxMicroseconds: summary.max)
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
