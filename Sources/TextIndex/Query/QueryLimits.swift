import Foundation

/// What one query may cost, so that no query holds a core for long: a
/// request of a service is one query. Past any bound the query stops with
/// a ``QueryLimitError`` naming the bound, never a slow answer.
///
/// | bound | default | counts |
/// |---|---|---|
/// | ``comparisons`` | 128 | `ATTR == "VALUE"`, `!=`, `<`…`>=`, `InRange` in one expression |
/// | ``expansions`` | 10,000 | index terms and attribute values that the query's wildcards and prefixes reach (`"lat*"`, `"*"`), all comparisons together |
/// | ``work`` | 2,000,000 | LMDB lookups (1 each) and stored documents read to confirm a string match (``documentWork`` each) |
/// | ``timeout`` | 5 s | wall-clock time from the start of the evaluation |
///
/// ```swift
/// var limits = QueryLimits()
/// limits.timeout = .milliseconds(200)   // a service's budget for one request
/// let hits = try index.query(#"title == "*xy*"cd"#, now: now, limits: limits, in: txn)
/// ```
public struct QueryLimits: Sendable, Equatable {
    /// Comparisons in one expression.
    public var comparisons = 128
    /// Index terms and attribute values the wildcards and prefixes of one query reach.
    public var expansions = 10_000
    /// Lookups, plus ``documentWork`` for each stored document read to confirm a match.
    public var work = 2_000_000
    /// How long one query may run; nil: no deadline.
    public var timeout: Duration? = .seconds(5)

    /// The work of reading one stored document (its content included) and
    /// matching a pattern against it, in lookups (about what it costs).
    public static let documentWork = 20

    public init() {}
}

/// A query stopped at one of its ``QueryLimits``: too many comparisons,
/// wildcards that reach too many terms, too much work, or past its
/// deadline. Nothing is returned; narrow the query (fewer comparisons, a
/// longer literal before a `*`, an attribute that is indexed whole), or
/// raise the limit where the cost is known to be affordable.
public struct QueryLimitError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Limit: String, Sendable {
        case comparisons, expansions, work, timeout
    }

    public var limit: Limit
    /// How far the query got (comparisons counted, terms reached, work done, seconds).
    public var reached: String
    /// The bound.
    public var allowed: String

    public var description: String {
        switch limit {
        case .comparisons:
            return "query too large: \(reached) comparisons; at most \(allowed) in one query"
        case .expansions:
            return "query too costly: its wildcards and prefixes reach more than \(allowed) index terms and values (\(reached)); "
                + "give a longer literal before each *"
        case .work:
            return "query too costly: it stopped after \(reached) units of work (lookups, and documents read to check a match); "
                + "at most \(allowed) in one query. Narrow it: a word without * on a text field, or an attribute value given whole"
        case .timeout:
            return "query stopped at its deadline of \(allowed) (after \(reached)); narrow it, or give it more time"
        }
    }
}

extension QueryExpression {
    /// How many comparisons (and `InRange`s) the expression holds.
    var comparisonCount: Int {
        switch self {
        case .and(let l, let r), .or(let l, let r): l.comparisonCount + r.comparisonCount
        case .compare, .inRange: 1
        }
    }
}
