import EventLog
import Foundation

/// A saved copy of an activity: what was saved for search and prediction.
///
/// ```swift
/// for saved in try store.savedActivities() { print(saved.key, saved.activity.title ?? "") }
/// ```
public struct SavedActivity: Sendable, Hashable {
    /// `persistentIdentifier`, else the activity id.
    public var key: String
    /// The activity as saved: its properties at that moment, `userInfo` cut
    /// to `requiredUserInfoKeys` when they were set.
    public var activity: UserActivity
    public var savedAt: Date
    /// The position of the `activity.saved` event.
    public var position: Position

    public init(key: String, activity: UserActivity, savedAt: Date, position: Position) {
        self.key = key
        self.activity = activity
        self.savedAt = savedAt
        self.position = position
    }

    init(proto m: Activitylog_V1_SavedRecord) throws {
        key = m.key
        activity = try UserActivity(proto: m.copy)
        savedAt = Date(microseconds: m.savedAtMicros)
        position = m.position
    }
}
