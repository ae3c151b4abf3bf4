import Foundation
import LMDB

/// One operation of SPEC §3, as a value: what ``ActivityStore/write(_:at:options:)``
/// applies in one transaction, and what a JSON line of `eventlog apply` becomes.
///
/// ```swift
/// try store.write([
///     .declareActivityTypes(["com.example.app.viewOrder"]),
///     .createActivity(activity),
///     .becomeCurrent("a1"),
/// ])
/// ```
///
/// Core Spotlight's operations go through the same path; between
/// `beginIndexBatch` and `endIndexBatch` of one index, commands commit with
/// its new client state (both markers must be in the same `write`):
///
/// ```swift
/// try store.write([
///     .beginIndexBatch(index: "orders"),
///     .indexSearchableItems([item]),
///     .endIndexBatch(index: "orders", clientState: Data("42".utf8), expectedClientState: nil),
/// ])
/// ```
///
/// Cases may be added, so a `switch` over it outside this module needs
/// `@unknown default`.
public enum ActivityCommand: Sendable, Hashable {
    case declareActivityTypes([String])
    case createActivity(UserActivity)
    case updateActivity(String, ActivityUpdate)
    case addUserInfoEntries(String, [Name: UserInfoValue])
    case becomeCurrent(String)
    case resignCurrent(String)
    case invalidate(String)
    case deleteSavedUserActivities(persistentIdentifiers: [String])
    case deleteAllSavedUserActivities
    case indexSearchableItems([SearchableItem])
    case deleteSearchableItems(identifiers: [String])
    case deleteSearchableItemsInDomains([String])
    case deleteAllSearchableItems
    case beginIndexBatch(index: String)
    /// `expectedClientState` nil: no check.
    case endIndexBatch(index: String, clientState: Data, expectedClientState: Data?)
    case purgeExpired(now: Date)
    /// Erases the command's user (SPEC §10): one `eventlog.redaction` event
    /// names the positions of every earlier event of the user's space, whose
    /// payloads are removed in the same transaction, and the user's data
    /// leaves every view. Must be the only command of its `write`.
    case forgetUser

    /// The operation's name, as in SPEC §6 (`"becomeCurrent"`).
    public var operation: String {
        switch self {
        case .declareActivityTypes: "declareActivityTypes"
        case .createActivity: "createActivity"
        case .updateActivity: "updateActivity"
        case .addUserInfoEntries: "addUserInfoEntries"
        case .becomeCurrent: "becomeCurrent"
        case .resignCurrent: "resignCurrent"
        case .invalidate: "invalidate"
        case .deleteSavedUserActivities: "deleteSavedUserActivities"
        case .deleteAllSavedUserActivities: "deleteAllSavedUserActivities"
        case .indexSearchableItems: "indexSearchableItems"
        case .deleteSearchableItems: "deleteSearchableItems"
        case .deleteSearchableItemsInDomains: "deleteSearchableItemsInDomains"
        case .deleteAllSearchableItems: "deleteAllSearchableItems"
        case .beginIndexBatch: "beginIndexBatch"
        case .endIndexBatch: "endIndexBatch"
        case .purgeExpired: "purgeExpired"
        case .forgetUser: "forgetUser"
        }
    }

    /// A command with the user space it acts in and the time its events
    /// record (nil: the batch's time).
    public struct Timed: Sendable, Hashable {
        public var command: ActivityCommand
        public var at: Date?
        /// The user space (SPEC §9); nil: the default space `""`, except that
        /// `purgeExpired` then purges every space.
        public var user: String?
        public init(_ command: ActivityCommand, user: String? = nil, at: Date? = nil) {
            self.command = command
            self.user = user
            self.at = at
        }
    }
}

/// What one command did.
///
/// ```swift
/// let result = try store.becomeCurrent("a2")
/// result.superseded     // "a1", when a1 was current on that device
/// result.positions      // 7...8: becameCurrent, then saved
/// ```
public struct CommandResult: Sendable, Hashable {
    /// The operation, as in SPEC §6.
    public var operation: String
    /// The positions the command's events took; nil when it changed nothing
    /// (becomeCurrent on a current activity, resignCurrent on an inactive one,
    /// invalidate twice, declaring declared types…).
    public var positions: ClosedRange<UInt64>?
    /// The types of the events appended, in order.
    public var eventTypes: [String]
    /// The activity a `becomeCurrent` superseded on its device.
    public var superseded: String?
    /// The key a saved copy was written under, when the command saved one.
    public var savedKey: String?
    /// The keys of the saved copies a deletion removed (sorted).
    public var removedKeys: [String]
    /// The searchable items a deletion or purge removed (sorted).
    public var removedItems: [String]
    /// The identifiers of `isUpdate` items that named no existing item and
    /// were dropped (sorted).
    public var droppedUpdates: [String]
    /// How many earlier events a `forgetUser` redacted.
    public var redactedEvents: UInt64 = 0
    /// The positions of the snapshots a `forgetUser` removed (those at or
    /// after the first event it redacted: they held the user's data), sorted.
    public var removedSnapshots: [UInt64] = []

    /// Whether the command appended anything.
    public var changed: Bool { positions != nil }

    init(operation: String) {
        self.operation = operation
        eventTypes = []
        removedKeys = []
        removedItems = []
        droppedUpdates = []
    }
}
