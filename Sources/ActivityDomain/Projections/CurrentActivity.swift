import EventLog
import Foundation

/// The activity current on a device, with its properties as they stand.
///
/// ```swift
/// for current in try store.currentActivities() {
///     print(current.device, current.activity.activity, current.activity.title ?? "")
/// }
/// ```
public struct CurrentActivity: Sendable, Hashable {
    public var device: String
    public var activity: UserActivity
    /// When it became current (the `activity.becameCurrent` event's time).
    public var becameCurrentAt: Date
    /// The position of that event.
    public var position: Position

    public init(device: String, activity: UserActivity, becameCurrentAt: Date, position: Position) {
        self.device = device
        self.activity = activity
        self.becameCurrentAt = becameCurrentAt
        self.position = position
    }
}
