import EventLog
import TextIndex
import Foundation

/// How an ``ActivityStore`` opens and answers.
///
/// ```swift
/// var options = ActivityStoreOptions()
/// options.store.durability = .noMetaSync
/// options.handoffUserInfoLimit = 4096
/// let store = try ActivityStore(path: "/var/lib/app/activities", options: options)
/// ```
public struct ActivityStoreOptions: Sendable {
    /// The engine's options: durability, map size, clock, group commit, and
    /// `readOnly` for a store opened only to read (an audit, a reporting
    /// process beside the service): it never waits for the service's writes
    /// and never rebuilds its views (`Docs/Architecture.md`, "Reading never writes").
    public var store = StoreOptions()
    /// The largest encoded `userInfo` (tagged JSON, UTF-8 bytes) that Handoff
    /// offers; Apple's limit is 3,072 bytes.
    public var handoffUserInfoLimit = 3072
    /// What one query may cost: comparisons, wildcard expansions, work and
    /// a deadline (``TextIndex/QueryLimits``); past any, the query throws
    /// ``TextIndex/QueryLimitError``.
    public var queryLimits = QueryLimits()
    /// With ``store``'s `dictionaryTrainingBytes` at 4 MiB: an activity
    /// store trains the log's zstd dictionary by itself (`Docs/LogFormat.md`,
    /// "Dictionaries").
    public init() {
        store.dictionaryTrainingBytes = 4 << 20
    }
}
