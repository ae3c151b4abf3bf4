import EventLog
import Foundation

/// An activity as the registry holds it: its properties, where it is in its
/// lifecycle, and when that happened.
///
/// ```swift
/// if let record = try store.activity("a1"), record.state == .current { … }
/// ```
public struct ActivityRecord: Sendable, Hashable {
    public var activity: UserActivity
    public var state: ActivityState
    /// The position of its `activity.created` event.
    public var createdPosition: Position
    public var createdAt: Date
    /// The position of the last event that changed it.
    public var lastPosition: Position
    /// The last time it became current, if ever.
    public var becameCurrentAt: Date?

    public init(activity: UserActivity, state: ActivityState, createdPosition: Position, createdAt: Date, lastPosition: Position,
                becameCurrentAt: Date?) {
        self.activity = activity
        self.state = state
        self.createdPosition = createdPosition
        self.createdAt = createdAt
        self.lastPosition = lastPosition
        self.becameCurrentAt = becameCurrentAt
    }

    init(proto m: Activitylog_V1_ActivityRecord) throws {
        activity = try UserActivity(proto: m.activity)
        state = ActivityState(proto: m.state)
        createdPosition = m.createdPosition
        createdAt = Date(microseconds: m.createdAtMicros)
        lastPosition = m.lastPosition
        becameCurrentAt = m.hasBecameCurrentAtMicros ? Date(microseconds: m.becameCurrentAtMicros) : nil
    }
}
