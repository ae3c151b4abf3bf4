import ActivityDomain
import EventLog
import Foundation
import LMDB
import TextIndex

/// The JSON shapes of SPEC §7 (and `Docs/CLI.md`). Absent optional fields
/// are left out rather than written as null, so that a field appears only
/// when the store holds it; dates are ISO-8601 UTC with `Z`.
enum ViewJSON {
    /// `current` and `handoff`: `{"device","activity","activityType","title"}`.
    static func current(_ current: CurrentActivity) -> JSONValue {
        var members: [String: JSONValue] = [
            "device": .string(current.device),
            "activity": .string(current.activity.activity),
            "activityType": .string(current.activity.activityType),
        ]
        if let title = current.activity.title { members["title"] = .string(title) }
        return .object(members)
    }

    /// `saved`: `{"key","activity","activityType","persistentIdentifier","title","keywords","userInfo","expirationDate"}`,
    /// keywords sorted by UTF-8 bytes, userInfo in the tagged JSON of SPEC §6.
    static func saved(_ saved: SavedActivity) -> JSONValue {
        let activity = saved.activity
        var members: [String: JSONValue] = [
            "key": .string(saved.key),
            "activity": .string(activity.activity),
            "activityType": .string(activity.activityType),
            "keywords": .array(activity.keywords.sorted(by: utf8Less).map(JSONValue.string)),
            "userInfo": UserInfoValue.jsonObject(activity.userInfo),
        ]
        if let value = activity.persistentIdentifier { members["persistentIdentifier"] = .string(value) }
        if let value = activity.title { members["title"] = .string(value) }
        if let value = activity.expirationDate { members["expirationDate"] = .string(ISO8601Time.string(from: value)) }
        return .object(members)
    }

    /// `resolve`: `{"identifier","status"}` plus `saved` (the shape above,
    /// with `savedAt` and `position`) or `removal`.
    static func resolution(_ identifier: String, _ resolution: SavedActivityResolution) -> JSONValue {
        switch resolution {
        case .saved(let saved):
            guard case .object(var members) = ViewJSON.saved(saved) else { fatalError("saved(_:) makes an object") }
            members.append(("savedAt", .string(ISO8601Time.string(from: saved.savedAt))))
            members.append(("position", .integer(Int64(saved.position))))
            return .object(["identifier": .string(identifier), "status": .string("saved"), "saved": .object(members)])
        case .removed(let removal):
            return .object([
                "identifier": .string(identifier),
                "status": .string("removed"),
                "removal": .object([
                    "key": .string(removal.key),
                    "position": .integer(Int64(removal.position)),
                    "operation": .string(removal.operation),
                    "removedAt": .string(ISO8601Time.string(from: removal.removedAt)),
                ]),
            ])
        case .unknown:
            return .object(["identifier": .string(identifier), "status": .string("unknown")])
        }
    }

    /// `log --json`: `{"position","type","version","at","event"}`; `event` is
    /// the decoded payload (Protocol Buffers' canonical JSON), left out with
    /// `"redacted": true` for a redacted payload, and left out for a type no
    /// catalog of this build knows.
    static func event(_ event: RecordedEvent) throws -> JSONValue {
        var members: [String: JSONValue] = [
            "position": .integer(Int64(event.position)),
            "type": .string(event.type),
            "version": .integer(Int64(event.schemaVersion)),
            "at": .string(ISO8601Time.string(from: event.appendedAt)),
        ]
        if event.isRedacted {
            members["redacted"] = .bool(true)
        } else if let text = try ActivityEventCatalog.json(of: event) {
            members["event"] = try JSONValue(parsing: text)
        }
        return .object(members)
    }
}

/// Orders strings by their UTF-8 bytes, as LMDB orders keys, so that sorted
/// output does not depend on Swift's String comparison (``KeyOrder/precedes(_:_:)``).
func utf8Less(_ a: String, _ b: String) -> Bool { KeyOrder.precedes(a, b) }
