import ActivityDomain
import EventLog
import Foundation
import LMDB
import TextIndex

/// The JSON shapes of SPEC §7 (and `Docs/CLI.md`): the members of the
/// library's own JSON (``ActivityJSON``, `Docs/Services.md`) that each
/// command prints. Absent optional fields are left out rather than written
/// as null; dates are ISO-8601 UTC with `Z`.
enum ViewJSON {
    /// `current` and `handoff`: `{"device","activity","activityType","title"}`.
    static func current(_ current: CurrentActivity) -> JSONValue {
        current.json.keeping(["device", "activity", "activityType", "title"])
    }

    /// The members of `saved`.
    static let savedMembers = ["key", "activity", "activityType", "persistentIdentifier", "title", "keywords", "userInfo", "expirationDate"]

    /// `saved`: `{"key","activity","activityType","persistentIdentifier","title","keywords","userInfo","expirationDate"}`,
    /// keywords sorted by UTF-8 bytes, userInfo in the tagged JSON of SPEC §6.
    static func saved(_ saved: SavedActivity) -> JSONValue {
        saved.json.keeping(savedMembers)
    }

    /// `resolve`: `{"identifier","status"}` plus `saved` (the shape above,
    /// with `savedAt` and `position`) or `removal` (without the identifier).
    static func resolution(_ identifier: String, _ resolution: SavedActivityResolution) -> JSONValue {
        let status: JSONValue = .object([("identifier", .string(identifier))])
        switch resolution {
        case .saved(let saved):
            return status.merging(.object([("status", .string("saved")),
                                           ("saved", saved.json.keeping(savedMembers + ["savedAt", "position"]))]))
        case .removed(let removal):
            return status.merging(.object([("status", .string("removed")),
                                           ("removal", removal.json.keeping(["key", "position", "operation", "removedAt"]))]))
        case .unknown:
            return status.merging(resolution.json)
        }
    }

    /// `items`: `{"uniqueIdentifier","domainIdentifier","attributeSet","expirationDate"}`.
    static func item(_ item: IndexedItem) -> JSONValue {
        item.json.keeping(["uniqueIdentifier", "domainIdentifier", "attributeSet", "expirationDate"])
    }

    /// `suggestions`: `{"key","activity","activityType","title","score"}`.
    static func suggestion(_ suggestion: Suggestion) -> JSONValue {
        suggestion.json.keeping(["key", "activity", "activityType", "title", "score"])
    }

    /// `log --json`: ``ActivityEventCatalog/logJSON(of:)``.
    static func event(_ event: RecordedEvent) throws -> JSONValue {
        try ActivityEventCatalog.logJSON(of: event)
    }

    /// Any other value: its whole JSON (`users`, `search`, `client-state`).
    static func value(_ value: some Encodable) throws -> JSONValue {
        try ActivityJSON.value(value)
    }
}

/// Orders strings by their UTF-8 bytes, as LMDB orders keys, so that sorted
/// output does not depend on Swift's String comparison (``KeyOrder/precedes(_:_:)``).
func utf8Less(_ a: String, _ b: String) -> Bool { KeyOrder.precedes(a, b) }
