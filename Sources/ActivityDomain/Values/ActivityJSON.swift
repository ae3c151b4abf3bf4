import Foundation

/// The library's JSON: one encoder and one decoder for every `Codable`
/// value the store takes or returns (``UserActivity``, ``SearchableItem``,
/// ``CurrentActivity``, ``SavedActivity``, ``IndexedItem``,
/// ``CommandResult``, ``UserChange``, the errors…), in the shapes of
/// `Docs/Operations.md` and `eventlog --json`, which prints with it.
///
/// ```swift
/// let body: Data = try ActivityJSON.data(try alice.currentActivities())       // [{"activity":"a1",…}]
/// let item = try ActivityJSON.decode(SearchableItem.self, from: requestBody)  // strict: unknown members are errors
/// ```
///
/// What it writes: compact JSON, object keys sorted by UTF-8 bytes,
/// integers as integers and doubles with a fraction or exponent (`4.0`),
/// dates as ISO-8601 UTC with `Z`, bytes as base64, absent optionals left
/// out; the same value gives the same bytes. What it reads keeps what
/// Foundation's `JSONDecoder` loses: `42` and `42.0` stay an integer and a
/// double (a `userInfo` value keeps its type). The value types decode from
/// Foundation's coders too (a service may use `JSONEncoder`), with those
/// two differences.
public enum ActivityJSON {
    /// `value` as a ``JSONValue``.
    public static func value(_ value: some Encodable) throws -> JSONValue {
        try JSONValueEncoder().encode(value)
    }

    /// `value` as JSON text.
    public static func string(_ value: some Encodable) throws -> String {
        try self.value(value).serialized()
    }

    /// `value` as JSON text in UTF-8.
    public static func data(_ value: some Encodable) throws -> Data {
        Data(try bytes(value))
    }

    /// `value` as JSON text in UTF-8 bytes (what a server writes out).
    public static func bytes(_ value: some Encodable) throws -> [UInt8] {
        // The library's values know their JSON: written straight from it,
        // not rebuilt node by node through an `Encoder` first (a page of
        // search results spent half its JSON time there). The same bytes.
        if let json = value as? JSONValue { return json.serializedBytes() }
        if let values = value as? [JSONValue] { return JSONValue.array(values).serializedBytes() }
        if let representable = value as? any JSONRepresentable { return representable.json.serializedBytes() }
        if let representables = value as? [any JSONRepresentable] { return JSONValue.array(representables.map(\.json)).serializedBytes() }
        return try self.value(value).serializedBytes()
    }

    /// A `T` from a parsed document.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try JSONValueDecoder().decode(type, from: value)
    }

    /// A `T` from JSON text; malformed JSON throws ``JSONParseError`` with
    /// the line and column.
    public static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try decode(type, from: JSONValue(parsing: text))
    }

    /// A `T` from JSON in UTF-8; bytes that are not UTF-8 are an error, never
    /// replaced.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard let text = String(validating: data, as: UTF8.self) else {
            throw JSONParseError(line: 1, column: 1, reason: "the body is not valid UTF-8")
        }
        return try decode(type, from: text)
    }
}

/// A ``JSONValue`` codes as the JSON it is: through ``ActivityJSON`` exactly,
/// through Foundation's coders as close as they allow (an integer-valued
/// double may come back an integer, members in the decoder's order).
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if let core = decoder as? DecoderCore {
            self = core.value
            return
        }
        if let keyed = try? decoder.container(keyedBy: JSONKey.self) {
            self = .object(try keyed.allKeys.map { (key: $0.stringValue, value: try keyed.decode(JSONValue.self, forKey: $0)) })
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !unkeyed.isAtEnd { values.append(try unkeyed.decode(JSONValue.self)) }
            self = .array(values)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let b = try? single.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? single.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? single.decode(Double.self) {
            self = .double(d)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if let core = encoder as? EncoderCore {
            core.node.content = .value(self)
            return
        }
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let b):
            var single = encoder.singleValueContainer()
            try single.encode(b)
        case .integer(let i):
            var single = encoder.singleValueContainer()
            try single.encode(i)
        case .double(let d):
            var single = encoder.singleValueContainer()
            try single.encode(d)
        case .string(let s):
            var single = encoder.singleValueContainer()
            try single.encode(s)
        case .array(let values):
            var unkeyed = encoder.unkeyedContainer()
            for value in values { try unkeyed.encode(value) }
        case .object(let members):
            var keyed = encoder.container(keyedBy: JSONKey.self)
            for member in members { try keyed.encode(member.value, forKey: JSONKey(member.key)) }
        }
    }

    /// This object with only the members named (in any order); other values unchanged.
    /// The command line prints such a part of a value's full JSON (SPEC §7).
    public func keeping(_ names: [String]) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.filter { Self.isNamed($0.key, names) })
    }

    /// This object without the members named; other values unchanged.
    public func removing(_ names: [String]) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.filter { !Self.isNamed($0.key, names) })
    }

    /// This object with `other`'s members added (replacing members of the same name).
    public func merging(_ other: JSONValue) -> JSONValue {
        guard case .object(let members) = self, case .object(let added) = other else { return self }
        let names = added.map(\.key)
        return .object(members.filter { !Self.isNamed($0.key, names) } + added)
    }

    /// ``merging(_:)`` of members in ascending key order (UTF-8 bytes) into
    /// an object whose members are in that order too: the result is in
    /// that order, so the writer writes it without sorting. An object out
    /// of order is merged as ``merging(_:)`` merges.
    func mergingSorted(_ added: [(key: String, value: JSONValue)]) -> JSONValue {
        guard case .object(let members) = self else { return self }
        var merged: [(key: String, value: JSONValue)] = []
        merged.reserveCapacity(members.count + added.count)
        var next = added.startIndex
        for member in members {
            if let last = merged.last, !last.key.utf8.lexicographicallyPrecedes(member.key.utf8) { return merging(.object(added)) }
            while next < added.endIndex, added[next].key.utf8.lexicographicallyPrecedes(member.key.utf8) {
                merged.append(added[next])
                next += 1
            }
            if next < added.endIndex, added[next].key.utf8.elementsEqual(member.key.utf8) { continue }
            merged.append(member)
        }
        merged.append(contentsOf: added[next...])
        return .object(merged)
    }

    /// Names compare by bytes: two canonically equal names are two names.
    private static func isNamed(_ key: String, _ names: [String]) -> Bool {
        names.contains { $0.utf8.elementsEqual(key.utf8) }
    }
}
