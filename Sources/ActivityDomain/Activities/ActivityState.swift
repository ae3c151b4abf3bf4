/// Where an activity is in its lifecycle (SPEC §3).
///
/// ```
/// createActivity ─▶ inactive ◀──resignCurrent / superseded── current
///                      │  └────────────becomeCurrent──────────▶ │
///                      └──────────invalidate──▶ invalidated ◀───┘
/// ```
///
/// `invalidated` is final.
public enum ActivityState: String, Sendable, Hashable, Codable, CaseIterable {
    case inactive
    case current
    case invalidated

    var proto: Activitylog_V1_ActivityLifecycle {
        switch self {
        case .inactive: .inactive
        case .current: .current
        case .invalidated: .invalidated
        }
    }

    init(proto: Activitylog_V1_ActivityLifecycle) {
        switch proto {
        case .current: self = .current
        case .invalidated: self = .invalidated
        default: self = .inactive
        }
    }
}
