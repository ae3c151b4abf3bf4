import Foundation

/// A parsed query of the query language (SPEC §5), with `$time` values
/// already resolved against the query's `now`.
///
/// ```swift
/// let e = try QueryParser.parse(#"title == "latte*"cd && rating >= 4"#, now: now)
/// // .and(.compare("title", .equal, .string(…)), .compare("rating", .greaterOrEqual, .number(4)))
/// ```
public indirect enum QueryExpression: Sendable, Equatable {
    case and(QueryExpression, QueryExpression)
    case or(QueryExpression, QueryExpression)
    case compare(attribute: String, ComparisonOperator, QueryValue)
    /// `InRange(attribute, low, high)`: low ≤ value ≤ high.
    case inRange(attribute: String, low: QueryValue, high: QueryValue)

    /// Levels of the tree: 1 for a comparison.
    public var depth: Int {
        switch self {
        case .and(let a, let b), .or(let a, let b): 1 + max(a.depth, b.depth)
        case .compare, .inRange: 1
        }
    }
}

/// `==`, `!=`, `<`, `>`, `<=`, `>=`.
public enum ComparisonOperator: String, Sendable, Equatable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case greater = ">"
    case lessOrEqual = "<="
    case greaterOrEqual = ">="
}

/// A literal of a query.
public enum QueryValue: Sendable, Equatable {
    case string(StringPattern)
    case number(Double)
    case date(Date)
}
