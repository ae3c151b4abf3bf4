import Foundation

/// A position in the log: 1 for the first record, gapless, assigned in
/// commit order under LMDB's single writer lock. Stored as the record's key,
/// eight bytes big-endian.
public typealias Position = UInt64

/// An event as the log holds it, read back or just appended.
///
/// ```swift
/// for event in try store.events(from: 1, limit: 10) {
///     print(event.position, event.type, event.schemaVersion, event.appendedAt)
/// }
/// ```
public struct RecordedEvent: Sendable, Equatable {
    public var position: Position
    /// The event type, e.g. `"activity.becameCurrent"`.
    public var type: String
    /// The version of the payload's schema for this type.
    public var schemaVersion: UInt32
    /// When it was appended: the write's time (``LogBatch/time``), or the time the command
    /// stated. Stored in whole microseconds since 1970 (UTC).
    public var appendedAt: Date
    /// Microseconds since 1970-01-01T00:00:00Z, as stored.
    public var appendedAtMicroseconds: Int64
    /// The encoded payload (Protocol Buffers for this project's events);
    /// empty when redacted.
    public var payload: [UInt8]
    /// True when the payload was removed after the fact (privacy deletion);
    /// its digest stays in the record, so the chain still verifies.
    public var isRedacted: Bool
    /// For a redacted record: the position of the ``RedactionRecord`` that
    /// authorized it (read from the engine's `redactions` database). A
    /// projection skips a redacted event that has one; one without it is
    /// damage. Past the head in a follower or a restore that holds the
    /// record only as a pending authorization (`Docs/Scaling.md`, "Erasure").
    public var redactedBy: Position? = nil
    /// For a redacted record: the ``RedactionRecord`` at ``redactedBy``,
    /// decoded (its ranges and the application's context), so that a
    /// projection that meets a redacted event before the record that
    /// redacted it (a follower that lags, a restore up to a position before
    /// the forget) can tell what it belonged to. Nil when unknown.
    public var redactionRecord: RedactionRecord? = nil
}

extension RecordedEvent {
    /// An event as it would be read back (not redacted): for decoding a
    /// payload that came from elsewhere (a change feed's JSON, a test).
    public init(position: Position, type: String, schemaVersion: UInt32, appendedAt: Date, payload: [UInt8]) {
        let micros = appendedAt.microsecondsSince1970
        self.init(position: position, type: type, schemaVersion: schemaVersion, appendedAt: Date(microsecondsSince1970: micros),
                  appendedAtMicroseconds: micros, payload: payload, isRedacted: false)
    }
}

/// An event to append: its type, schema version and encoded payload.
///
/// ```swift
/// let event = NewEvent(type: "order.placed", schemaVersion: 1, payload: try message.serializedBytes())
/// ```
public struct NewEvent: Sendable, Equatable {
    public var type: String
    public var schemaVersion: UInt32
    public var payload: [UInt8]
    /// The time to record; nil records the write's time (``LogBatch/time``).
    public var at: Date?

    public init(type: String, schemaVersion: UInt32, payload: [UInt8], at: Date? = nil) {
        self.type = type
        self.schemaVersion = schemaVersion
        self.payload = payload
        self.at = at
    }
}

extension Date {
    /// Whole microseconds since 1970, rounded toward negative infinity.
    var microsecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1_000_000).rounded(.down))
    }

    init(microsecondsSince1970 micros: Int64) {
        self.init(timeIntervalSince1970: Double(micros) / 1_000_000)
    }
}
