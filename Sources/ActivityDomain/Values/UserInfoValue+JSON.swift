import Foundation
import LMDB
import TextIndex

/// The tagged JSON form of SPEC §6: JSON's own types as they are (a number
/// without fraction or exponent is an integer), the others as one-member
/// objects: `{"$date": "2026-11-22T10:00:00Z"}`, `{"$data": "<base64>"}`,
/// `{"$url": "https://…"}`, `{"$uuid": "…"}`.
///
/// ```swift
/// let value = try UserInfoValue(json: JSONValue(parsing: #"{"$date":"2026-11-22T10:00:00Z"}"#))
/// value.json.serialized()   // {"$date":"2026-11-22T10:00:00Z"}
/// ```
///
/// A dictionary whose only key starts with `$` would read back as a tagged
/// value, so such a dictionary is written inside `{"$dictionary": {…}}`, and
/// read back from it. Non-finite doubles have no JSON form and are rejected.
extension UserInfoValue {
    /// The tagged JSON form, keys sorted when serialized.
    public var json: JSONValue {
        switch self {
        case .string(let s): .string(s)
        case .integer(let i): .integer(i)
        case .double(let d): .double(d)
        case .bool(let b): .bool(b)
        case .date(let date): .object([("$date", .string(ISO8601Time.string(from: date)))])
        case .data(let data): .object([("$data", .string(data.base64EncodedString()))])
        case .url(let url): .object([("$url", .string(url.absoluteString))])
        case .uuid(let uuid): .object([("$uuid", .string(uuid.uuidString))])
        case .null: .null
        case .array(let values): .array(values.map(\.json))
        case .dictionary(let entries):
            Self.looksTagged(entries.keys)
                ? .object([("$dictionary", Self.jsonObject(entries))])
                : Self.jsonObject(entries)
        }
    }

    /// Reads the tagged JSON form; throws ``UserInfoJSONError`` naming the
    /// path of the offending value.
    public init(json: JSONValue) throws {
        try self.init(json: json, path: "")
    }

    init(json: JSONValue, path: String) throws {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .integer(let i): self = .integer(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        case .array(let values):
            self = .array(try values.enumerated().map { try UserInfoValue(json: $1, path: "\(path)[\($0)]") })
        case .object(let members):
            if members.count == 1, let (tag, payload) = members.first.map({ ($0.key, $0.value) }), tag.hasPrefix("$") {
                self = try Self.tagged(tag, payload, path: path)
            } else {
                self = .dictionary(try Self.dictionary(fromJSONMembers: members, path: path))
            }
        }
    }

    /// A userInfo dictionary from a JSON object (`"userInfo": {…}`).
    public static func dictionary(fromJSON json: JSONValue, path: String = "userInfo") throws -> [Name: UserInfoValue] {
        guard case .object(let members) = json else {
            throw UserInfoJSONError(path: path, reason: "expected an object, found \(json.kindName)")
        }
        return try dictionary(fromJSONMembers: members, path: path)
    }

    /// A userInfo dictionary as a JSON object, tagged values inside.
    public static func jsonObject(_ entries: [Name: UserInfoValue]) -> JSONValue {
        .object(entries.map { (key: $0.key.string, value: $0.value.json) })
    }

    private static func dictionary(fromJSONMembers members: [(key: String, value: JSONValue)], path: String) throws -> [Name: UserInfoValue] {
        var result: [Name: UserInfoValue] = [:]
        for member in members {
            let childPath = path.isEmpty ? member.key : "\(path).\(member.key)"
            guard result[Name(member.key)] == nil else { throw UserInfoJSONError(path: childPath, reason: "the key appears twice") }
            result[Name(member.key)] = try UserInfoValue(json: member.value, path: childPath)
        }
        return result
    }

    private static func looksTagged(_ keys: Dictionary<Name, UserInfoValue>.Keys) -> Bool {
        keys.count == 1 && keys.first!.string.hasPrefix("$")
    }

    private static func tagged(_ tag: String, _ payload: JSONValue, path: String) throws -> UserInfoValue {
        func text() throws -> String {
            guard case .string(let s) = payload else {
                throw UserInfoJSONError(path: path, reason: "\(tag) needs a string, found \(payload.kindName)")
            }
            return s
        }
        switch tag {
        case "$date":
            let s = try text()
            guard let date = ISO8601Time.date(from: s) else {
                throw UserInfoJSONError(path: path, reason: "\"\(s)\" is not an ISO-8601 time from \(ISO8601Time.range), such as 2026-11-22T10:00:00Z")
            }
            return .date(date)
        case "$data":
            let s = try text()
            guard let data = Data(base64Encoded: s) else {
                throw UserInfoJSONError(path: path, reason: "\"\(s)\" is not base64")
            }
            return .data(data)
        case "$url":
            let s = try text()
            guard let url = URL(string: s), url.scheme != nil else {
                throw UserInfoJSONError(path: path, reason: "\"\(s)\" is not an absolute URL")
            }
            return .url(url)
        case "$uuid":
            let s = try text()
            guard let uuid = UUID(uuidString: s) else { throw UserInfoJSONError(path: path, reason: "\"\(s)\" is not a UUID") }
            return .uuid(uuid)
        case "$dictionary":
            return .dictionary(try dictionary(fromJSON: payload, path: path))
        default:
            throw UserInfoJSONError(path: path, reason: "unknown tag \(tag); allowed: $date, $data, $url, $uuid, $dictionary")
        }
    }
}

extension JSONValue {
    /// The JSON type's name, for messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON value that is not a valid tagged userInfo value.
public struct UserInfoJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the value, e.g. `userInfo.order.placed`.
    public var path: String
    public var reason: String
    public var description: String { "invalid userInfo value at \(path.isEmpty ? "top level" : path): \(reason)" }
}
