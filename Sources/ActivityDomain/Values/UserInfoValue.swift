import Foundation
import LMDB

/// A value of an activity's `userInfo`: the property-list types Apple allows.
///
/// ```swift
/// let info: [Name: UserInfoValue] = [
///     "orderID": 42,                                   // .integer
///     "size": "medium",                                // .string
///     "placed": .date(Date(timeIntervalSince1970: 0)),
///     "tags": ["hot", "oat"],                          // .array
/// ]
/// ```
///
/// Dates keep whole microseconds (as the log does): a date is rounded to the
/// nearest microsecond when the value is made, so that what is stored reads
/// back equal. Dictionaries are keyed by ``Name`` (two keys that differ in
/// one byte are two keys); every encoding sorts their keys by bytes.
/// Strings are equal when their bytes are.
public enum UserInfoValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case url(URL)
    case uuid(UUID)
    case null
    case array([UserInfoValue])
    case dictionary([Name: UserInfoValue])

    public static func == (lhs: UserInfoValue, rhs: UserInfoValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): Name.equal(a, b)
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.date(let a), .date(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.url(let a), .url(let b)): Name.equal(a.absoluteString, b.absoluteString)
        case (.uuid(let a), .uuid(let b)): a == b
        case (.null, .null): true
        case (.array(let a), .array(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let s): hasher.combine(Name(s))
        case .integer(let i): hasher.combine(i)
        case .double(let d): hasher.combine(d)
        case .bool(let b): hasher.combine(b)
        case .date(let d): hasher.combine(d)
        case .data(let d): hasher.combine(d)
        case .url(let u): hasher.combine(Name(u.absoluteString))
        case .uuid(let u): hasher.combine(u)
        case .null: hasher.combine(0)
        case .array(let values): hasher.combine(values)
        case .dictionary(let entries): hasher.combine(entries)
        }
    }

    /// The deepest arrays and dictionaries may nest in a value (a string is
    /// depth 0, `["a"]` 1): what every walk of it (the encodings, and
    /// Protocol Buffers' decoding limit of 100 messages) stays well within.
    public static let maxDepth = 16

    /// How deep arrays and dictionaries nest in this value when that is at
    /// most `limit`; more than `limit` otherwise (the walk stops there, so
    /// that it stays bounded itself).
    func depth(upTo limit: Int = UserInfoValue.maxDepth) -> Int {
        let children: [UserInfoValue]
        switch self {
        case .array(let values): children = values
        case .dictionary(let entries): children = Array(entries.values)
        default: return 0
        }
        guard limit > 0 else { return 1 }
        return 1 + (children.lazy.map { $0.depth(upTo: limit - 1) }.max() ?? 0)
    }

    /// The same value with every date rounded to whole microseconds, the
    /// precision the store keeps.
    public var normalized: UserInfoValue {
        switch self {
        case .date(let date): .date(date.roundedToMicroseconds)
        case .array(let values): .array(values.map(\.normalized))
        case .dictionary(let entries): .dictionary(entries.mapValues(\.normalized))
        default: self
        }
    }

    /// The type's name, as errors and docs use it.
    public var kindName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .double: "double"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .url: "URL"
        case .uuid: "UUID"
        case .null: "null"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }
}

extension UserInfoValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: UserInfoValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (Name, UserInfoValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}

extension Date {
    /// Microseconds since 1970, rounded to the nearest: the store's precision
    /// for dates inside activities (round-trips exactly).
    var microsecondsRounded: Int64 { Int64((timeIntervalSince1970 * 1_000_000).rounded()) }

    init(microseconds: Int64) { self.init(timeIntervalSince1970: Double(microseconds) / 1_000_000) }

    var roundedToMicroseconds: Date { Date(microseconds: microsecondsRounded) }

    /// Microseconds since 1970 rounded down: the formula the engine uses to
    /// stamp an event, so that a decision made at `at` and the time recorded
    /// for it agree.
    var eventMicroseconds: Int64 { Int64((timeIntervalSince1970 * 1_000_000).rounded(.down)) }
}
