import EventLog
import Foundation
import TextIndex

// The JSON of what the store returns (Docs/Services.md, "JSON"): each value
// is its activity's or item's own JSON (a `createActivity` operation's
// members, an `indexSearchableItems` item) with the view's members beside
// it. `eventlog --json` prints parts of these (SPEC §7): the members it
// names, through ActivityJSON. One `json` a type, one `init(json:)`, and
// Codable through them, so every coder writes and reads the same shape.

/// Reads the members a view adds beside an activity's or item's own.
private struct ViewMembers {
    let value: JSONValue
    let type: String

    init(_ value: JSONValue, _ type: String) throws {
        guard case .object = value else {
            throw ActivityError(.invalidValue, operation: "decode \(type)", field: type, value: value.kindName, allowed: "an object")
        }
        self.value = value
        self.type = type
    }

    private func fail(_ name: String, _ allowed: String) -> ActivityError {
        ActivityError(.invalidValue, operation: "decode \(type)", field: name, value: value[name]?.serialized() ?? "missing", allowed: allowed)
    }

    func string(_ name: String) throws -> String {
        guard case .string(let s)? = value[name] else { throw fail(name, "a string") }
        return s
    }

    func optionalString(_ name: String) throws -> String? {
        switch value[name] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw fail(name, "a string")
        }
    }

    func position(_ name: String) throws -> Position {
        guard case .integer(let i)? = value[name], i >= 0 else { throw fail(name, "a position (an integer, 0 or more)") }
        return Position(i)
    }

    func date(_ name: String) throws -> Date {
        guard case .string(let s)? = value[name], let date = ISO8601Time.date(from: s) else {
            throw fail(name, "an ISO-8601 time such as 2026-11-22T10:00:00Z")
        }
        return date
    }

    func optionalDate(_ name: String) throws -> Date? {
        switch value[name] {
        case nil, .null?: return nil
        default: return try date(name)
        }
    }

    func double(_ name: String) throws -> Double {
        switch value[name] {
        case .integer(let i)?: return Double(i)
        case .double(let d)?: return d
        default: throw fail(name, "a number")
        }
    }

    func bool(_ name: String) throws -> Bool {
        guard case .bool(let b)? = value[name] else { throw fail(name, "true or false") }
        return b
    }

    func strings(_ name: String) throws -> [String] {
        switch value[name] {
        case nil, .null?: return []
        case .array(let values)?:
            return try values.map {
                guard case .string(let s) = $0 else { throw fail(name, "an array of strings") }
                return s
            }
        default: throw fail(name, "an array of strings")
        }
    }

    /// The value without the view's members: the activity's or item's own.
    func rest(removing names: [String]) -> JSONValue { value.removing(names) }
}

private func jsonTime(_ date: Date) -> JSONValue { .string(ISO8601Time.string(from: date)) }
private func jsonPosition(_ position: Position) -> JSONValue { .integer(Int64(position)) }

/// A value with one JSON shape: `json` writes it, `init(json:)` reads it
/// (strictly: an unknown member or a wrong type is an ``ActivityError``),
/// and its `Codable` goes through them, so ``ActivityJSON``, Foundation's
/// coders and a service's own types all see the same shape.
///
/// ```swift
/// let json = current.json                      // JSONValue
/// let back = try CurrentActivity(json: json)   // == current
/// ```
public protocol JSONRepresentable: Codable {
    var json: JSONValue { get }
    init(json: JSONValue) throws
}

extension JSONRepresentable {
    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

// MARK: Current activities

extension CurrentActivity: JSONRepresentable {
    static let viewMembers = ["becameCurrentAt", "position"]

    /// The activity's JSON with `becameCurrentAt` and `position` (of its
    /// `activity.becameCurrent` event); `device` is the activity's own.
    /// `eventlog current --json` prints `device`, `activity`, `activityType`, `title` of it.
    public var json: JSONValue {
        activity.json.merging(.object([("becameCurrentAt", jsonTime(becameCurrentAt)), ("position", jsonPosition(position))]))
    }

    public init(json: JSONValue) throws {
        let members = try ViewMembers(json, "CurrentActivity")
        let activity = try UserActivity(json: members.rest(removing: Self.viewMembers))
        self.init(device: activity.device, activity: activity, becameCurrentAt: try members.date("becameCurrentAt"),
                  position: try members.position("position"))
    }
}

// MARK: Saved activities

extension SavedActivity: JSONRepresentable {
    static let viewMembers = ["key", "savedAt", "position"]

    /// The saved copy's activity JSON with `key`, `savedAt` and `position`
    /// (of its `activity.saved` event). `eventlog saved --json` prints
    /// `key`, `activity`, `activityType`, `persistentIdentifier`, `title`,
    /// `keywords`, `userInfo`, `expirationDate` of it.
    public var json: JSONValue {
        activity.json.merging(.object([("key", .string(key)), ("savedAt", jsonTime(savedAt)), ("position", jsonPosition(position))]))
    }

    public init(json: JSONValue) throws {
        let members = try ViewMembers(json, "SavedActivity")
        self.init(key: try members.string("key"), activity: try UserActivity(json: members.rest(removing: Self.viewMembers)),
                  savedAt: try members.date("savedAt"), position: try members.position("position"))
    }
}

extension SavedActivityRemoval: JSONRepresentable {
    /// `{"identifier","key","position","operation","removedAt"}`.
    public var json: JSONValue {
        .object([("identifier", .string(identifier)), ("key", .string(key)), ("position", jsonPosition(position)),
                 ("operation", .string(operation)), ("removedAt", jsonTime(removedAt))])
    }

    public init(json: JSONValue) throws {
        let members = try ViewMembers(json, "SavedActivityRemoval")
        self.init(identifier: try members.string("identifier"), key: try members.string("key"), position: try members.position("position"),
                  operation: try members.string("operation"), removedAt: try members.date("removedAt"))
    }
}

extension SavedActivityResolution: JSONRepresentable {
    /// `{"status":"saved","saved":{…}}`, `{"status":"removed","removal":{…}}`
    /// or `{"status":"unknown"}`; `eventlog resolve --json` adds the
    /// identifier asked about.
    public var json: JSONValue {
        switch self {
        case .saved(let saved): .object([("status", .string("saved")), ("saved", saved.json)])
        case .removed(let removal): .object([("status", .string("removed")), ("removal", removal.json)])
        case .unknown: .object([("status", .string("unknown"))])
        }
    }

    public init(json: JSONValue) throws {
        let members = try ViewMembers(json, "SavedActivityResolution")
        switch try members.string("status") {
        case "saved": self = .saved(try SavedActivity(json: json["saved"] ?? .null))
        case "removed": self = .removed(try SavedActivityRemoval(json: json["removal"] ?? .null))
        case "unknown": self = .unknown
        case let other:
            throw ActivityError(.invalidValue, operation: "decode SavedActivityResolution", field: "status", value: other,
                                allowed: "saved, removed, unknown")
        }
    }
}

extension Suggestion: JSONRepresentable {
    static let viewMembers = ["key", "score"]

    /// The saved copy's activity JSON with `key` and `score`.
    /// `eventlog suggestions --json` prints `key`, `activity`, `activityType`, `title`, `score` of it.
    public var json: JSONValue {
        activity.json.merging(.object([("key", .string(key)), ("score", .double(score))]))
    }

    public init(json: JSONValue) throws {
        let members = try ViewMembers(json, "Suggestion")
        self.init(key: try members.string("key"), activity: try UserActivity(json: members.rest(removing: Self.viewMembers)),
                  score: try members.double("score"))
    }
}

extension ActivityRecord: JSONRepresentable {
    static let viewMembers = ["state", "createdPosition", "createdAt", "lastPosition", "becameCurrentAt"]

    /// The activity's JSON with `state` (`inactive`, `current`,
    /// `invalidated`), `createdPosition`, `createdAt`, `lastPosition` and
    /// `becameCurrentAt` (when it ever became current).
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("state", .string(state.rawValue)), ("createdPosition", jsonPosition(createdPosition)), ("createdAt", jsonTime(createdAt)),
            ("lastPosition", jsonPosition(lastPosition)),
        ]
        if let becameCurrentAt { members.append(("becameCurrentAt", jsonTime(becameCurrentAt))) }
        return activity.json.merging(.object(members))
    }

    public init(json: JSONValue) throws {
        let members = try ViewMembers(json, "ActivityRecord")
        let stateName = try members.string("state")
        guard let state = ActivityState(rawValue: stateName) else {
            throw ActivityError(.invalidValue, operation: "decode ActivityRecord", field: "state", value: stateName,
                                allowed: ActivityState.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.init(activity: try UserActivity(json: members.rest(removing: Self.viewMembers)), state: state,
                  createdPosition: try members.position("createdPosition"), createdAt: try members.date("createdAt"),
                  lastPosition: try members.position("lastPosition"), becameCurrentAt: try members.optionalDate("becameCurrentAt"))
    }
}

// MARK: Items

extension SearchableItem: Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

extension ContentAttributeSet: Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

/// The tagged JSON of SPEC §6 (`{"$date": …}`, …).
extension UserInfoValue: JSONRepresentable {}

extension IndexedItem: JSONRepresentable {
    static let viewMembers = ["hasDefaultExpiration", "position", "indexedAt", "firstPosition"]

    /// The item's JSON with `hasDefaultExpiration`, `position` and
    /// `indexedAt` (of the event that wrote this state) and `firstPosition`
    /// (of the event that first added it). `eventlog items --json` prints
    /// `uniqueIdentifier`, `domainIdentifier`, `attributeSet`, `expirationDate` of it.
    public var json: JSONValue {
        item.json.mergingSorted([
            ("firstPosition", jsonPosition(firstPosition)), ("hasDefaultExpiration", .bool(hasDefaultExpiration)),
            ("indexedAt", jsonTime(indexedAt)), ("position", jsonPosition(position)),
        ])
    }

    public init(json: JSONValue) throws {
        let members = try ViewMembers(json, "IndexedItem")
        self.init(item: try SearchableItem(json: members.rest(removing: Self.viewMembers)),
                  hasDefaultExpiration: try members.bool("hasDefaultExpiration"), position: try members.position("position"),
                  indexedAt: try members.date("indexedAt"), firstPosition: try members.position("firstPosition"))
    }
}

extension IndexClientState: JSONRepresentable {
    /// `{"index","clientState"}`, the state in base64.
    public var json: JSONValue {
        .object([("index", .string(index)), ("clientState", .string(clientState.base64EncodedString()))])
    }

    public init(json: JSONValue) throws {
        let members = try ViewMembers(json, "IndexClientState")
        let text = try members.string("clientState")
        guard let data = Data(base64Encoded: text) else {
            throw ActivityError(.invalidValue, operation: "decode IndexClientState", field: "clientState", value: text, allowed: "base64")
        }
        self.init(index: try members.string("index"), clientState: data)
    }
}

// MARK: Commands

extension CommandResult: JSONRepresentable {
    /// `{"operation","positions":{"first","last"},"eventTypes",…}`: the
    /// operation, the positions its events took (left out when it changed
    /// nothing), and what it decided; empty lists and a zero count left out.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("operation", .string(operation))]
        if let positions {
            members.append(("positions", .object([("first", jsonPosition(positions.lowerBound)), ("last", jsonPosition(positions.upperBound))])))
        }
        func list(_ name: String, _ values: [String]) {
            if !values.isEmpty { members.append((name, .array(values.map(JSONValue.string)))) }
        }
        list("eventTypes", eventTypes)
        if let superseded { members.append(("superseded", .string(superseded))) }
        if let savedKey { members.append(("savedKey", .string(savedKey))) }
        list("removedKeys", removedKeys)
        list("removedItems", removedItems)
        list("droppedUpdates", droppedUpdates)
        if redactedEvents > 0 { members.append(("redactedEvents", .integer(Int64(redactedEvents)))) }
        if !removedSnapshots.isEmpty { members.append(("removedSnapshots", .array(removedSnapshots.map(jsonPosition)))) }
        return .object(members)
    }

    public init(json: JSONValue) throws {
        let members = try ViewMembers(json, "CommandResult")
        self.init(operation: try members.string("operation"))
        if let range = json["positions"], range != .null {
            let bounds = try ViewMembers(range, "CommandResult.positions")
            let first = try bounds.position("first"), last = try bounds.position("last")
            guard first <= last else {
                throw ActivityError(.invalidValue, operation: "decode CommandResult", field: "positions", value: range.serialized(),
                                    allowed: "first at most last")
            }
            positions = first...last
        }
        eventTypes = try members.strings("eventTypes")
        superseded = try members.optionalString("superseded")
        savedKey = try members.optionalString("savedKey")
        removedKeys = try members.strings("removedKeys")
        removedItems = try members.strings("removedItems")
        droppedUpdates = try members.strings("droppedUpdates")
        if json["redactedEvents"] != nil { redactedEvents = try members.position("redactedEvents") }
        if case .array(let values)? = json["removedSnapshots"] {
            removedSnapshots = try values.map {
                guard case .integer(let i) = $0, i >= 0 else {
                    throw ActivityError(.invalidValue, operation: "decode CommandResult", field: "removedSnapshots", value: $0.serialized(),
                                        allowed: "positions")
                }
                return UInt64(i)
            }
        }
    }
}

// MARK: Errors

extension ActivityError: Codable {
    private enum CodingKeys: String, CodingKey {
        case code, operation, field, value, allowed, commandIndex, message
    }

    /// `{"code","operation","field","value","allowed","commandIndex","message"}`:
    /// what a service sends a client with the status of `Docs/Services.md`;
    /// `message` is the description, written and not read.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(operation, forKey: .operation)
        try container.encodeIfPresent(field, forKey: .field)
        try container.encodeIfPresent(value, forKey: .value)
        try container.encodeIfPresent(allowed, forKey: .allowed)
        try container.encodeIfPresent(commandIndex, forKey: .commandIndex)
        try container.encode(description, forKey: .message)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(try container.decode(Code.self, forKey: .code), operation: try container.decode(String.self, forKey: .operation),
                  field: try container.decodeIfPresent(String.self, forKey: .field),
                  value: try container.decodeIfPresent(String.self, forKey: .value),
                  allowed: try container.decodeIfPresent(String.self, forKey: .allowed))
        commandIndex = try container.decodeIfPresent(Int.self, forKey: .commandIndex)
    }
}
