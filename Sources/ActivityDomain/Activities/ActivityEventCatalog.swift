import EventLog
import Foundation
import TextIndex
import SwiftProtobuf

/// The event types the activity domain appends, their schema version, and
/// a decoder for tools (`eventlog log --json`, `eventlog verify`).
///
/// ```swift
/// for event in try store.eventStore.events(from: 1) {
///     if let json = try ActivityEventCatalog.json(of: event) { print(event.type, json) }
/// }
/// ```
///
/// `Docs/Semantics.md` describes each event's fields.
public enum ActivityEventCatalog {
    public static let activityTypesDeclared = "activityTypes.declared"
    public static let activityCreated = "activity.created"
    public static let activityUpdated = "activity.updated"
    public static let activityUserInfoEntriesAdded = "activity.userInfoEntriesAdded"
    public static let activityBecameCurrent = "activity.becameCurrent"
    public static let activityResignedCurrent = "activity.resignedCurrent"
    public static let activityInvalidated = "activity.invalidated"
    public static let activitySaved = "activity.saved"
    public static let savedActivitiesDeleted = "savedActivities.deleted"
    public static let savedActivitiesAllDeleted = "savedActivities.allDeleted"

    /// Every event type of this domain.
    public static let types: Set<String> = [
        activityTypesDeclared, activityCreated, activityUpdated, activityUserInfoEntriesAdded, activityBecameCurrent,
        activityResignedCurrent, activityInvalidated, activitySaved, savedActivitiesDeleted, savedActivitiesAllDeleted,
    ]

    /// The schema version events of this domain are written with: 2, which
    /// added the user space (`user`, field 15), for all but the store-wide
    /// `activityTypes.declared`, which has no space and stays at 1. Version 1
    /// events are read as events of the default space.
    public static func schemaVersion(of type: String) -> UInt32 {
        type == activityTypesDeclared ? 1 : 2
    }

    /// The payload as Protocol Buffers' canonical JSON (field names in
    /// lowerCamelCase, 64-bit integers as strings, per the proto3 JSON
    /// mapping); nil for an event of another domain. Core Spotlight events
    /// (``SpotlightEventCatalog``) share the store's log, so they are
    /// decoded here too. Throws when the payload does not decode.
    public static func json(of event: RecordedEvent) throws -> String? {
        guard let decoded = try ActivityEvent(event) else { return try SpotlightEventCatalog.json(of: event) }
        return try decoded.message.jsonString()
    }

    /// The event as `eventlog log --json` prints it, one object a line:
    /// `{"position","type","version","at","event"}`, `event` being the
    /// payload as Protocol Buffers' canonical JSON (``json(of:)``), left out
    /// with `"redacted": true` for a redacted payload, and left out for a
    /// type no catalog of this build knows. A change feed's ``UserChange``
    /// has the same shape.
    public static func logJSON(of event: RecordedEvent) throws -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("position", .integer(Int64(event.position))),
            ("type", .string(event.type)),
            ("version", .integer(Int64(event.schemaVersion))),
            ("at", .string(ISO8601Time.string(from: event.appendedAt))),
        ]
        if event.isRedacted {
            members.append(("redacted", .bool(true)))
        } else if let text = try json(of: event) {
            members.append(("event", try JSONValue(parsing: Array(text.utf8), maxDepth: logJSONDepth)))
        }
        return .object(members)
    }

    /// How deep a payload's Protocol Buffers JSON may nest: every userInfo
    /// value accepted (``UserInfoValue/maxDepth`` levels of arrays and
    /// dictionaries, each four levels there: the value, its `dictionary`
    /// or `array`, its `entries` or `values`, an entry) inside the event's
    /// own few levels. What a write accepts, `log --json` prints.
    static let logJSONDepth = 4 * (UserInfoValue.maxDepth + 1) + 16

    /// The user space `event` belongs to: `""` for the default space (and
    /// every event of schema version 1), nil for a store-wide event
    /// (`activityTypes.declared`), a redacted one, or one of another domain.
    /// Reads the payload's field 15 only.
    public static func user(of event: RecordedEvent) throws -> String? {
        try EventSpace.user(of: event)
    }

    /// Throws when `event` is an activity event whose payload does not
    /// decode: a `payloadCheck` for ``EventLog/EventStore/verify(payloadCheck:progress:)``.
    /// Core Spotlight events are checked too.
    public static func checkPayload(_ event: RecordedEvent) throws {
        if try ActivityEvent(event) == nil { try SpotlightEventCatalog.checkPayload(event) }
    }
}
