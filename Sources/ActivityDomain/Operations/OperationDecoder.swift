import Foundation
import LMDB
import TextIndex

/// Turns the JSON lines of SPEC §6 into commands: what `eventlog apply`
/// reads, one operation a line.
///
/// ```swift
/// let decoder = OperationDecoder()
/// let timed = try decoder.decode(#"{"op":"becomeCurrent","activity":"a1","at":"2026-11-22T10:00:00Z"}"#)
/// try store.write([timed])
/// ```
///
/// Strict on purpose: an unknown `op`, an unknown member or a value of the
/// wrong JSON type is an ``ActivityError`` with code `malformedOperation`
/// or `invalidValue` naming the operation, the field and what is allowed,
/// so that a typo (`"eligibleForSerach"`) never passes silently.
/// `expectedClientState` given as `null` means no check, as when left out. Malformed
/// JSON throws ``JSONParseError`` with the column (counted in UTF-8 bytes
/// of the line). Rules that need the store (declared types, URL schemes,
/// identifier lengths…) are left to the command itself.
public struct OperationDecoder: Sendable {
    public init() {}

    /// Every `op` of SPEC §6, in its order.
    public static let operations = [
        "declareActivityTypes", "createActivity", "updateActivity", "addUserInfoEntries", "becomeCurrent",
        "resignCurrent", "invalidate", "deleteSavedUserActivities", "deleteAllSavedUserActivities",
        "indexSearchableItems", "deleteSearchableItems", "deleteSearchableItemsInDomains", "deleteAllSearchableItems",
        "beginIndexBatch", "endIndexBatch", "purgeExpired", "forgetUser",
    ]

    /// Decodes one line (one JSON object).
    public func decode(_ line: String) throws -> ActivityCommand.Timed {
        try decode(JSONValue(parsing: line))
    }

    /// Decodes one line from its bytes: a string that is not valid UTF-8 is
    /// a ``JSONParseError`` naming its member, never replaced by U+FFFD.
    public func decode(_ line: [UInt8]) throws -> ActivityCommand.Timed {
        try decode(JSONValue(parsing: line))
    }

    /// Decodes one operation already parsed.
    public func decode(_ json: JSONValue) throws -> ActivityCommand.Timed {
        guard case .object = json else {
            throw ActivityError(.malformedOperation, operation: "apply", field: "op", value: json.kindName,
                                allowed: "a JSON object with an \"op\" member")
        }
        guard let opValue = json["op"] else {
            throw ActivityError(.malformedOperation, operation: "apply", field: "op", value: "missing",
                                allowed: Self.operations.joined(separator: ", "))
        }
        guard case .string(let op) = opValue else {
            throw ActivityError(.malformedOperation, operation: "apply", field: "op", value: opValue.serialized(),
                                allowed: Self.operations.joined(separator: ", "))
        }
        var reader = MemberReader(json: json, operation: op)
        // The user space the operation acts in (SPEC §9); on createActivity
        // it is also the activity's owner.
        let user = try reader.optional("user", reader.string)
        let command: ActivityCommand
        switch op {
        case "declareActivityTypes":
            if let user {
                throw ActivityError(.malformedOperation, operation: op, field: "user", value: user,
                                    allowed: "no user: declared activity types are the app's, shared by every user space")
            }
            command = .declareActivityTypes(try reader.required("types", reader.strings))
        case "createActivity":
            command = .createActivity(try UserActivity.read(&reader))
        case "updateActivity":
            let id = try reader.required("activity", reader.string)
            command = .updateActivity(id, try ActivityUpdate.read(&reader))
        case "addUserInfoEntries":
            let id = try reader.required("activity", reader.string)
            command = .addUserInfoEntries(id, try reader.required("entries", reader.userInfo))
        case "becomeCurrent":
            command = .becomeCurrent(try reader.required("activity", reader.string))
        case "resignCurrent":
            command = .resignCurrent(try reader.required("activity", reader.string))
        case "invalidate":
            command = .invalidate(try reader.required("activity", reader.string))
        case "deleteSavedUserActivities":
            command = .deleteSavedUserActivities(persistentIdentifiers: try reader.required("persistentIdentifiers", reader.strings))
        case "deleteAllSavedUserActivities":
            command = .deleteAllSavedUserActivities
        case "indexSearchableItems":
            command = .indexSearchableItems(try reader.required("items", reader.items))
        case "deleteSearchableItems":
            command = .deleteSearchableItems(identifiers: try reader.required("identifiers", reader.strings))
        case "deleteSearchableItemsInDomains":
            command = .deleteSearchableItemsInDomains(try reader.required("domains", reader.strings))
        case "deleteAllSearchableItems":
            command = .deleteAllSearchableItems
        case "beginIndexBatch":
            command = .beginIndexBatch(index: try reader.required("index", reader.string))
        case "endIndexBatch":
            command = .endIndexBatch(index: try reader.required("index", reader.string),
                                     clientState: try reader.required("clientState", reader.base64),
                                     expectedClientState: try reader.optional("expectedClientState", reader.base64))
        case "purgeExpired":
            command = .purgeExpired(now: try reader.required("now", reader.date))
        case "forgetUser":
            guard let user, !user.isEmpty else {
                throw ActivityError(.malformedOperation, operation: op, field: "user", value: user.map { "\"\($0)\"" } ?? "missing",
                                    allowed: "the name of the user to forget (not the default space \"\")")
            }
            command = .forgetUser
        default:
            throw ActivityError(.malformedOperation, operation: "apply", field: "op", value: op,
                                allowed: Self.operations.joined(separator: ", "))
        }
        let at = try reader.optional("at", reader.date)
        try reader.rejectUnknownMembers()
        return ActivityCommand.Timed(command, user: user, at: at)
    }

}

/// Reads the members of one operation object and remembers which were
/// read, so that whatever is left over is reported as unknown.
struct MemberReader {
    let members: [(key: String, value: JSONValue)]
    let operation: String
    private var read: Set<Name> = ["op"]

    init(json: JSONValue, operation: String) {
        if case .object(let members) = json { self.members = members } else { members = [] }
        self.operation = operation
    }

    func has(_ name: String) -> Bool { members.contains { Name.equal($0.key, name) } }

    func shown(_ name: String) -> String { value(name).map { $0.serialized() } ?? "" }

    private func value(_ name: String) -> JSONValue? { members.last(where: { Name.equal($0.key, name) })?.value }

    func fail(_ field: String, _ value: JSONValue, _ allowed: String) -> ActivityError {
        // ActivityError quotes the value itself: a string goes in bare.
        let shown: String
        if case .string(let s) = value { shown = s } else { shown = value.serialized() }
        return ActivityError(.invalidValue, operation: operation, field: field, value: shown, allowed: allowed)
    }

    /// A member that must be present and not null.
    mutating func required<T>(_ name: String, _ convert: (String, JSONValue) throws -> T) throws -> T {
        read.insert(Name(name))
        guard let value = value(name) else {
            throw ActivityError(.malformedOperation, operation: operation, field: name, value: "missing", allowed: "\(name) is required")
        }
        if case .null = value { throw fail(name, value, "\(name) is required and cannot be null") }
        return try convert(name, value)
    }

    /// A member that may be left out; `null` counts as left out.
    mutating func optional<T>(_ name: String, _ convert: (String, JSONValue) throws -> T) throws -> T? {
        read.insert(Name(name))
        guard let value = value(name) else { return nil }
        if case .null = value { return nil }
        return try convert(name, value)
    }

    /// For updates: absent → nil (keep), `null` → `.some(nil)` (clear).
    mutating func clearable<T>(_ name: String, _ convert: (String, JSONValue) throws -> T) throws -> T?? {
        read.insert(Name(name))
        guard let value = value(name) else { return nil }
        if case .null = value { return .some(nil) }
        return .some(try convert(name, value))
    }

    /// (A member given twice never gets here: the JSON parser refuses it, by bytes.)
    func rejectUnknownMembers() throws {
        let unknown = members.map(\.key).filter { !read.contains(Name($0)) }
        if let first = unknown.first {
            throw ActivityError(.malformedOperation, operation: operation, field: first, value: "unknown member",
                                allowed: (["op"] + read.subtracting(["op"]).sorted().map(\.string)).joined(separator: ", "))
        }
    }

    // MARK: Conversions

    func string(_ name: String, _ value: JSONValue) throws -> String {
        guard case .string(let s) = value else { throw fail(name, value, "a string") }
        return s
    }

    func strings(_ name: String, _ value: JSONValue) throws -> [String] {
        guard case .array(let values) = value else { throw fail(name, value, "an array of strings") }
        return try values.map { element in
            guard case .string(let s) = element else { throw fail(name, element, "an array of strings") }
            return s
        }
    }

    func bool(_ name: String, _ value: JSONValue) throws -> Bool {
        guard case .bool(let b) = value else { throw fail(name, value, "true or false") }
        return b
    }

    func date(_ name: String, _ value: JSONValue) throws -> Date {
        guard case .string(let s) = value, let date = ISO8601Time.date(from: s) else {
            throw fail(name, value, "an ISO-8601 time from \(ISO8601Time.range), such as 2026-11-22T10:00:00Z")
        }
        return date
    }

    func url(_ name: String, _ value: JSONValue) throws -> URL {
        guard case .string(let s) = value, let url = URL(string: s), url.scheme != nil else {
            throw fail(name, value, "an absolute URL such as https://example.com/orders/42")
        }
        return url
    }

    func userInfo(_ name: String, _ value: JSONValue) throws -> [Name: UserInfoValue] {
        do {
            return try UserInfoValue.dictionary(fromJSON: value, path: name)
        } catch let error as UserInfoJSONError {
            throw ActivityError(.invalidValue, operation: operation, field: error.path, value: nil,
                                allowed: error.reason + "; values: JSON types, or tagged {\"$date\"}, {\"$data\"}, {\"$url\"}, {\"$uuid\"}")
        }
    }

    func base64(_ name: String, _ value: JSONValue) throws -> Data {
        guard case .string(let s) = value, let data = Data(base64Encoded: s) else {
            throw fail(name, value, "base64 text, e.g. \"NDI=\"")
        }
        return data
    }

    func items(_ name: String, _ value: JSONValue) throws -> [SearchableItem] {
        guard case .array(let values) = value else { throw fail(name, value, "an array of items") }
        return try values.map { try SearchableItem(json: $0, operation: operation) }
    }

    func attributes(_ name: String, _ value: JSONValue) throws -> ContentAttributeSet {
        try ContentAttributeSet(json: value, operation: operation)
    }
}
