import Dispatch
import Metrics

/// What the engine reports through swift-metrics (`Docs/Services.md`,
/// "Metrics"): with no metrics backend bootstrapped (`MetricsSystem.bootstrap`)
/// every record is a no-op. Every metric carries the dimension `store` (the
/// store's directory), so two stores in one process are told apart.
///
/// | label | kind | what |
/// |---|---|---|
/// | `eventlog_commits_total` | counter | write transactions committed that appended |
/// | `eventlog_commit_writes` | recorder | writes (callers) that shared a commit |
/// | `eventlog_commit_duration` | timer | a group's write transaction, begin to commit returned |
/// | `eventlog_commit_sync_duration` | timer | `mdb_txn_commit` alone: the pages written and the fsyncs |
/// | `eventlog_writes_in_flight` | gauge | writes started and not finished when a group commits (the write queue's depth) |
/// | `eventlog_head_position` | gauge | the log's last position after a commit |
/// | `eventlog_index_lag_positions`, `eventlog_index_lag_seconds` | gauge | how far a keyword index built behind the log lags it: ``recordIndexLag(positions:seconds:)`` |
///
/// ```swift
/// PrometheusMetricsFactory … ; MetricsSystem.bootstrap(factory)   // before opening the store
/// let store = try EventStore<Views>(path: path)                    // its metrics from now on
/// ```
public struct StoreMetrics: Sendable {
    /// The dimension `store`: the store's directory as it was opened.
    public let store: String
    let commits: Counter
    let commitWrites: Recorder
    let commitDuration: Timer
    let syncDuration: Timer
    let writesInFlight: Gauge
    let head: Gauge
    let indexLagPositions: Gauge
    let indexLagSeconds: Gauge

    /// The metrics of the store at `path`, from the metrics system bootstrapped now.
    public init(path: String) {
        store = path
        let dimensions = [("store", path)]
        commits = Counter(label: "eventlog_commits_total", dimensions: dimensions)
        commitWrites = Recorder(label: "eventlog_commit_writes", dimensions: dimensions)
        commitDuration = Timer(label: "eventlog_commit_duration", dimensions: dimensions)
        syncDuration = Timer(label: "eventlog_commit_sync_duration", dimensions: dimensions)
        writesInFlight = Gauge(label: "eventlog_writes_in_flight", dimensions: dimensions)
        head = Gauge(label: "eventlog_head_position", dimensions: dimensions)
        indexLagPositions = Gauge(label: "eventlog_index_lag_positions", dimensions: dimensions)
        indexLagSeconds = Gauge(label: "eventlog_index_lag_seconds", dimensions: dimensions)
    }

    /// A group's transaction committed: `writes` callers shared it, it took
    /// `nanoseconds` from begin to commit, and the log ends at `head`.
    func recordCommit(writes: Int, nanoseconds: UInt64, head position: Position) {
        commits.increment()
        commitWrites.record(writes)
        commitDuration.recordNanoseconds(Int64(clamping: nanoseconds))
        head.record(Int64(clamping: position))
    }

    /// `mdb_txn_commit` (pages written, fsyncs) took `nanoseconds`.
    func recordSync(nanoseconds: UInt64) {
        syncDuration.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// How far a keyword index that follows the log in its own environment
    /// lags it: the hook an indexer reports through.
    public func recordIndexLag(positions: UInt64, seconds: Double) {
        indexLagPositions.record(Int64(clamping: positions))
        indexLagSeconds.record(seconds)
    }

    /// Now, for durations, in nanoseconds of a monotonic clock.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
