import EventLog
import Foundation

/// When and how a saved copy that an identifier named was removed: what
/// ``ActivityStore/resolve(_:)`` answers for a link whose target is gone.
public struct SavedActivityRemoval: Sendable, Hashable {
    /// The identifier asked about.
    public var identifier: String
    /// The key of the copy that was removed.
    public var key: String
    /// The position of the event that removed it.
    public var position: Position
    /// That event's type: `savedActivities.deleted`, `savedActivities.allDeleted`,
    /// or `activity.saved` when a newer copy under the same key no longer
    /// carries the identifier.
    public var operation: String
    public var removedAt: Date

    public init(identifier: String, key: String, position: Position, operation: String, removedAt: Date) {
        self.identifier = identifier
        self.key = key
        self.position = position
        self.operation = operation
        self.removedAt = removedAt
    }

    init(proto m: Activitylog_V1_RemovalRecord) {
        identifier = m.identifier
        key = m.key
        position = m.position
        operation = m.operation
        removedAt = Date(microseconds: m.removedAtMicros)
    }
}

/// What an identifier resolves to.
public enum SavedActivityResolution: Sendable, Hashable {
    /// The saved activity it names.
    case saved(SavedActivity)
    /// It named a saved activity that is gone: when and by what.
    case removed(SavedActivityRemoval)
    /// It never named a saved activity.
    case unknown
}
