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

    public init() {}
}
