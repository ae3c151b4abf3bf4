/// What one setting measured.
public struct IndexingResult: Sendable, Codable, Equatable {
    public var setting: IndexingSetting
    public var items: Int
    /// The run stopped at its item limit while the source had more
    /// (`eventlog bench --max-commits` caps small batch sizes).
    public var capped: Bool
    /// Indexing until searchable (from the first write until the index's
    /// checkpoint covers the last): reading and parsing the input is not timed.
    public var seconds: Double
    public var itemsPerSecond: Double
    /// Megabytes (10⁶ bytes) of item text (titles, names, descriptions, keywords) per second.
    public var megabytesPerSecond: Double
    /// Writes submitted (one per batch); with several writers, group commit
    /// lets several share one transaction.
    public var commits: Int
    /// Milliseconds per `indexSearchableItems` call, its commit included
    /// (until acknowledged: durable in the log).
    public var commitLatency: LatencySummary
    /// Milliseconds from a write's acknowledgment until the index's
    /// checkpoint covered it (``SearchableLag``).
    public var searchableLag: LatencySummary
    /// The transactions the store's group commit wrote for those writes
    /// (``EventLog/GroupCommitStatistics``): fewer than ``commits`` when
    /// writes shared transactions.
    public var transactions: Int
    /// Raw LMDB's commit rate measured beside the engine's, one raw commit
    /// after each of the engine's (`--alternate-raw`); nil without.
    public var rawLMDB: RawCommitRate?
    /// The process's resident high-water mark (VmHWM), bytes: the whole
    /// setting's peak when it runs in a process of its own. It includes the
    /// store's memory-mapped pages (and the replay's scratch store's), so it
    /// grows with the store.
    public var peakResidentBytes: Int
    /// The peak of the process's own memory (RssAnon, sampled every 10 ms),
    /// bytes: what must stay flat in corpus size.
    public var peakAnonymousBytes: Int
    /// The same peak up to the end of indexing, before the replay and the
    /// queries: the replay's scratch rebuild holds its transaction's dirty
    /// pages in memory and may set ``peakAnonymousBytes`` by itself.
    public var indexingPeakAnonymousBytes: Int
    /// Bytes the store's files occupy on disk.
    public var bytesOnDisk: Int
    /// A full rebuild of every view from the log, in a scratch environment.
    public var replaySeconds: Double
    public var replayEventsPerSecond: Double
    /// Items per second of that rebuild: comparable with ``itemsPerSecond``.
    public var replayItemsPerSecond: Double
    /// CPU seconds (user and system, every thread of the process) that
    /// rebuild used, its comparison with the live views included.
    public var replayCPUSeconds: Double
    /// ``replayCPUSeconds`` over ``replaySeconds``: how many cores the
    /// rebuild kept busy on average (1.0: one core).
    public var replayCores: Double
    /// The rebuilt views equal the live ones byte for byte.
    public var replayVerified: Bool
    /// Latency of the given queries, when there were any.
    public var queries: QueryLatency?
}
