/// A malformed query: what was wrong and the column (1-based, in Unicode
/// scalars) where the parser found it.
///
/// ```swift
/// do { _ = try QueryParser.parse(#"title = "x""#, now: now) }
/// catch let e as QueryError { print(e) }   // column 7: expected ==, !=, <, >, <= or >=, found "="
/// ```
public struct QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    public var column: Int
    public var message: String

    public init(column: Int, message: String) {
        self.column = column
        self.message = message
    }

    public var description: String { "query error at column \(column): \(message)" }
}
