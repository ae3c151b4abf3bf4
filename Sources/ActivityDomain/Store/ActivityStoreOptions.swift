import EventLog
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
    /// The engine's options: durability, map size, clock, group commit.
    public var store = StoreOptions()
    /// The largest encoded `userInfo` (tagged JSON, UTF-8 bytes) that Handoff
    /// offers; Apple's limit is 3,072 bytes.
    public var handoffUserInfoLimit = 3072
    /// Whether `indexSearchableItems` tokenizes the items before its write
    /// transaction, split over the machine's cores, so that the writer (and
    /// the writers waiting on it in a group commit) only interns terms
    /// (`Docs/Search.md`, "Indexing pipeline"). What is written is the same
    /// either way. Off by default: for one caller indexing batch after
    /// batch it costs more CPU than it saves the writer (measured there).
    public var preparesSearchDocuments = false

    public init() {}
}
