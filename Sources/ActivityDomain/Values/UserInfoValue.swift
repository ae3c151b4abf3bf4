import Foundation

/// A value of an activity's `userInfo`: the property-list types Apple allows.
///
/// ```swift
/// let info: [String: UserInfoValue] = [
///     "orderID": 42,                                   // .integer
///     "size": "medium",                                // .string
///     "placed": .date(Date(timeIntervalSince1970: 0)),
///     "tags": ["hot", "oat"],                          // .array
/// ]
/// ```
///
/// Dates keep whole microseconds (as the log does): a date is rounded to the
/// nearest microsecond when the value is made, so that what is stored reads
/// back equal. Dictionaries are Swift dictionaries here; every encoding sorts
/// their keys.
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
    case dictionary([String: UserInfoValue])

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
    public init(dictionaryLiteral elements: (String, UserInfoValue)...) {
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
