import Foundation

/// A structured value of a document, for the query language: one or more
/// strings, numbers or dates (a multi-valued attribute matches a query when
/// one of its values does).
///
/// ```swift
/// doc.attributes["domainIdentifier"] = .strings(["orders.2024"])
/// doc.attributes["rating"] = .numbers([4.5])
/// doc.attributes["contentCreationDate"] = .dates([created])
/// ```
public enum AttributeValue: Sendable, Equatable {
    case strings([String])
    case numbers([Double])
    case dates([Date])

    /// One string.
    public static func string(_ s: String) -> AttributeValue { .strings([s]) }
    /// One number.
    public static func number(_ n: Double) -> AttributeValue { .numbers([n]) }
    /// One date.
    public static func date(_ d: Date) -> AttributeValue { .dates([d]) }

    /// How many values it holds.
    public var count: Int {
        switch self {
        case .strings(let v): v.count
        case .numbers(let v): v.count
        case .dates(let v): v.count
        }
    }
}
