/// Progress of a rebuild, verification or time travel, for a terminal.
public struct ReplayProgress: Sendable {
    public enum Phase: String, Sendable {
        case snapshot, log, index, swap, compare, copyLog
    }
    public var phase: Phase
    /// The last position applied (or copied).
    public var position: Position
    /// Where this phase ends.
    public var end: Position
    /// Events applied since the phase began.
    public var events: UInt64
    public var seconds: Double
}

/// What a rebuild did.
public struct ReplayReport: Sendable, Equatable {
    /// The snapshot it started from; nil: position 1.
    public var snapshot: Position?
    /// Snapshots skipped because their digest failed (damaged), newest first.
    public var damagedSnapshots: [Position]
    /// The position the views were built to.
    public var position: Position
    /// Events applied from the log (after the snapshot).
    public var eventsApplied: UInt64
    /// Seconds, the index's part included.
    public var seconds: Double
    /// The index's part (nil for a store without an index, or when the
    /// views already differ).
    public var index: IndexReplayReport? = nil
}

/// What a rebuild, verification or time travel did to the index: where it
/// started, the position it reached, what it applied, how long it took.
public struct IndexReplayReport: Sendable, Equatable {
    /// The index snapshot it started from; nil: position 1.
    public var snapshot: Position?
    public var damagedSnapshots: [Position]
    /// The position the index was built to (for a verification, the one it
    /// was compared at: the live index's).
    public var position: Position
    public var eventsApplied: UInt64
    public var seconds: Double
}

/// Where rebuilt views first differ from the live ones.
public struct ViewDifference: Sendable, Equatable, CustomStringConvertible {
    public var projection: String
    public var database: String
    /// The first key that differs (present in one, absent in the other, or
    /// with another value), as bytes.
    public var key: [UInt8]
    public var detail: String

    /// The key as text when it is UTF-8, else hexadecimal.
    public var keyDescription: String {
        if let text = String(validating: key, as: UTF8.self), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 }) { return text }
        return key.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    public var description: String { "\(projection) / \(database) / key \(keyDescription): \(detail)" }
}

/// The outcome of ``EventStore/verifyViews(full:progress:)``.
public struct ViewComparison: Sendable, Equatable {
    public var report: ReplayReport
    /// The first difference; nil when the rebuilt views equal the live ones byte for byte.
    public var difference: ViewDifference?
    public var isEqual: Bool { difference == nil }
}
