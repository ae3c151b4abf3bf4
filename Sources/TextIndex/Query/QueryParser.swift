import Foundation
import LMDB

/// A recursive-descent parser for the query language (SPEC §5):
///
/// ```
/// query      = or
/// or         = and { "||" and }
/// and        = primary { "&&" primary }
/// primary    = "(" or ")" | inRange | comparison
/// comparison = NAME op value
/// op         = "==" | "!=" | "<" | ">" | "<=" | ">="
/// inRange    = "InRange" "(" NAME "," bound "," bound ")"
/// value      = STRING [MODIFIERS] | bound
/// bound      = NUMBER | time
/// time       = "$time.now" [ "(" NUMBER ")" ]          now, plus seconds
///            | "$time.today" [ "(" INTEGER ")" ]       00:00 UTC of now's day, plus days
///            | "$time.iso" "(" STRING ")"              an ISO-8601 instant
/// STRING     = '"' { any but '"' and '\' | '\"' | '\\' } '"'   (`*` is a wildcard)
/// MODIFIERS  = letters of "cdwt" right after the closing quote
/// NAME       = letter { letter | digit | "_" }
/// ```
///
/// `&&` binds tighter than `||`. Ordering operators and `InRange` take
/// numbers and dates only. Errors are ``QueryError``s naming the column.
///
/// Bounded whatever the thread's stack (a service's threads may have small
/// ones): parentheses nest at most ``maxNesting`` deep, checked before the
/// parser recurses, and a run of `&&` or `||` is kept as a balanced tree,
/// so that an expression of N terms is about log2 N deep; every walk of the
/// tree (evaluation, and freeing it) recurses at most ``maxDepth`` deep.
///
/// ```swift
/// let e = try QueryParser.parse(#"title == "latte*"cd && (keywords == "coffee"c || domainIdentifier == "orders")"#,
///                               now: Date())
/// ```
public struct QueryParser {
    let scalars: [Unicode.Scalar]
    var position = 0
    let now: Date
    /// The attribute names allowed, compared by their bytes.
    let attributes: Set<Name>?
    /// Parentheses open around the current position.
    var nesting = 0

    /// The deepest parentheses may nest.
    public static let maxNesting = 64
    /// The deepest a query's expression tree may be (parentheses, and the
    /// balanced runs of `&&` and `||` inside them).
    public static let maxDepth = 256

    /// Parses `text`; `$time` values are resolved against `now`. When
    /// `attributes` is given, other attribute names are errors.
    public static func parse(_ text: String, now: Date, attributes: Set<String>? = nil) throws -> QueryExpression {
        var parser = QueryParser(scalars: Array(text.unicodeScalars), now: now, attributes: attributes.map { Set($0.map { Name($0) }) })
        let e = try parser.parseOr()
        parser.skipSpace()
        if parser.position < parser.scalars.count {
            throw parser.error("unexpected \(parser.describeHere()) after the end of the query")
        }
        return e
    }

    // MARK: Grammar

    mutating func parseOr() throws -> QueryExpression {
        let start = position
        var terms = [try parseAnd()]
        while consume("||") { terms.append(try parseAnd()) }
        return try balanced(terms, from: start, QueryExpression.or)
    }

    mutating func parseAnd() throws -> QueryExpression {
        let start = position
        var terms = [try parsePrimary()]
        while consume("&&") { terms.append(try parsePrimary()) }
        return try balanced(terms, from: start, QueryExpression.and)
    }

    /// `terms` joined by `join` into a balanced tree (the same matches as a
    /// left-leaning one: `&&` and `||` are associative), no deeper than ``maxDepth``.
    func balanced(_ terms: [QueryExpression], from start: Int,
                  _ join: (QueryExpression, QueryExpression) -> QueryExpression) throws -> QueryExpression {
        var level = terms
        while level.count > 1 {
            var next: [QueryExpression] = []
            next.reserveCapacity((level.count + 1) / 2)
            var i = 0
            while i + 1 < level.count {
                next.append(join(level[i], level[i + 1]))
                i += 2
            }
            if i < level.count { next.append(level[i]) }
            level = next
        }
        if level[0].depth > Self.maxDepth {
            throw QueryError(column: start + 1, message: "the query nests deeper than \(Self.maxDepth) levels")
        }
        return level[0]
    }

    mutating func parsePrimary() throws -> QueryExpression {
        skipSpace()
        if consume("(") {
            // Checked before recursing: the limit holds whatever the thread's stack.
            guard nesting < Self.maxNesting else {
                throw QueryError(column: position, message: "parentheses nest deeper than \(Self.maxNesting) levels")
            }
            nesting += 1
            let e = try parseOr()
            nesting -= 1
            guard consume(")") else { throw error("expected \")\", found \(describeHere())") }
            return e
        }
        let nameColumn = position
        guard let name = parseName() else {
            throw error("expected an attribute name, InRange or \"(\", found \(describeHere())")
        }
        if name == "InRange" {
            skipSpace()
            if peek() == "(" { return try parseInRange() }
        }
        try checkAttribute(name, at: nameColumn)
        skipSpace()
        guard let op = parseOperator() else {
            throw error("expected ==, !=, <, >, <= or >=, found \(describeHere())")
        }
        skipSpace()
        let valueColumn = position
        let value = try parseValue()
        if op != .equal && op != .notEqual, case .string = value {
            throw QueryError(column: valueColumn + 1, message: "\(op.rawValue) compares numbers and dates, not strings")
        }
        return .compare(attribute: name, op, value)
    }

    mutating func parseInRange() throws -> QueryExpression {
        guard consume("(") else { throw error("expected \"(\"") }
        skipSpace()
        let nameColumn = position
        guard let name = parseName() else { throw error("expected an attribute name, found \(describeHere())") }
        try checkAttribute(name, at: nameColumn)
        guard consume(",") else { throw error("expected \",\", found \(describeHere())") }
        skipSpace()
        let low = try parseBound()
        guard consume(",") else { throw error("expected \",\", found \(describeHere())") }
        skipSpace()
        let high = try parseBound()
        guard consume(")") else { throw error("expected \")\", found \(describeHere())") }
        return .inRange(attribute: name, low: low, high: high)
    }

    mutating func parseValue() throws -> QueryValue {
        if peek() == "\"" {
            let literals = try parseString()
            var modifiers = ""
            while let c = peek(), c.properties.isAlphabetic {
                guard "cdwt".unicodeScalars.contains(c) else {
                    throw error("unknown modifier \"\(c)\"; modifiers are c, d, w and t")
                }
                modifiers.unicodeScalars.append(c)
                position += 1
            }
            return .string(StringPattern(literals: literals, modifiers: modifiers))
        }
        return try parseBound()
    }

    mutating func parseBound() throws -> QueryValue {
        if peek() == "$" { return .date(try parseTime()) }
        if let n = parseNumber() { return .number(n) }
        throw error("expected a number, a $time value or a string, found \(describeHere())")
    }

    /// A quoted string, split at unescaped `*` into literals.
    mutating func parseString() throws -> [String] {
        let start = position
        position += 1
        var literals: [String] = []
        var current = String.UnicodeScalarView()
        while true {
            guard let c = peek() else {
                position = start
                throw error("unterminated string")
            }
            position += 1
            switch c {
            case "\"":
                literals.append(String(current))
                return literals
            case "\\":
                guard let e = peek(), e == "\"" || e == "\\" else {
                    position -= 1
                    throw error("unknown escape; only \\\" and \\\\ are allowed")
                }
                current.append(e)
                position += 1
            case "*":
                literals.append(String(current))
                current = String.UnicodeScalarView()
            default:
                current.append(c)
            }
        }
    }

    mutating func parseTime() throws -> Date {
        let column = position
        guard let name = parseName(allowDollarAndDots: true) else { throw error("expected $time.now, $time.today or $time.iso") }
        switch name {
        case "$time.now":
            if consumeNoSpace("(") {
                skipSpace()
                guard let n = parseNumber() else { throw error("expected a number of seconds") }
                guard consume(")") else { throw error("expected \")\"") }
                return now.addingTimeInterval(n)
            }
            return now
        case "$time.today":
            var days = 0.0
            if consumeNoSpace("(") {
                skipSpace()
                if peek() != ")" {
                    guard let n = parseNumber(), n == n.rounded() else { throw error("expected a whole number of days") }
                    days = n
                }
                guard consume(")") else { throw error("expected \")\"") }
            }
            // Midnight UTC of now's day: no time zone enters the index.
            let day = (now.timeIntervalSince1970 / 86_400).rounded(.down)
            return Date(timeIntervalSince1970: (day + days) * 86_400)
        case "$time.iso":
            guard consume("(") else { throw error("expected \"(\" after $time.iso") }
            skipSpace()
            let stringColumn = position
            guard peek() == "\"" else { throw error("expected a quoted ISO-8601 date") }
            let text = try parseString().joined(separator: "*")
            guard let date = ISO8601Time.date(from: text) else {
                throw QueryError(column: stringColumn + 1, message: "\"\(text)\" is not an ISO-8601 date from \(ISO8601Time.range), such as 2026-11-22T10:00:00Z")
            }
            guard consume(")") else { throw error("expected \")\"") }
            return date
        default:
            throw QueryError(column: column + 1, message: "unknown time value \(name); use $time.now, $time.today(N) or $time.iso(\"…\")")
        }
    }

    // MARK: Lexing

    func peek() -> Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    mutating func skipSpace() {
        while let c = peek(), c.properties.isWhitespace { position += 1 }
    }

    /// Skips space, then consumes `token` when it is next.
    mutating func consume(_ token: String) -> Bool {
        skipSpace()
        return consumeNoSpace(token)
    }

    mutating func consumeNoSpace(_ token: String) -> Bool {
        let t = Array(token.unicodeScalars)
        guard position + t.count <= scalars.count, Array(scalars[position..<(position + t.count)]) == t else { return false }
        position += t.count
        return true
    }

    mutating func parseName(allowDollarAndDots: Bool = false) -> String? {
        let start = position
        if allowDollarAndDots, peek() == "$" { position += 1 }
        guard let c = peek(), c.properties.isAlphabetic || c == "_" else { position = start; return nil }
        while let c = peek(), c.properties.isAlphabetic || c.properties.numericType != nil || c == "_" || (allowDollarAndDots && c == ".") {
            position += 1
        }
        return String(String.UnicodeScalarView(scalars[start..<position]))
    }

    mutating func parseOperator() -> ComparisonOperator? {
        for op in [ComparisonOperator.equal, .notEqual, .lessOrEqual, .greaterOrEqual, .less, .greater] {
            if consumeNoSpace(op.rawValue) { return op }
        }
        return nil
    }

    mutating func parseNumber() -> Double? {
        let start = position
        if peek() == "-" || peek() == "+" { position += 1 }
        var digits = 0
        while let c = peek(), ("0"..."9").contains(c) { position += 1; digits += 1 }
        if peek() == ".", position + 1 < scalars.count, ("0"..."9").contains(scalars[position + 1]) {
            position += 1
            while let c = peek(), ("0"..."9").contains(c) { position += 1; digits += 1 }
        }
        guard digits > 0 else { position = start; return nil }
        if let e = peek(), e == "e" || e == "E" {
            let mark = position
            position += 1
            if peek() == "-" || peek() == "+" { position += 1 }
            var exponentDigits = 0
            while let c = peek(), ("0"..."9").contains(c) { position += 1; exponentDigits += 1 }
            if exponentDigits == 0 { position = mark }
        }
        return Double(String(String.UnicodeScalarView(scalars[start..<position])))
    }

    func checkAttribute(_ name: String, at column: Int) throws {
        guard let attributes, !attributes.contains(Name(name)) else { return }
        throw QueryError(column: column + 1,
                         message: "unknown attribute \(name); known: \(attributes.sorted().map(\.string).joined(separator: ", "))")
    }

    func describeHere() -> String {
        guard position < scalars.count else { return "the end of the query" }
        let rest = String(String.UnicodeScalarView(scalars[position..<min(scalars.count, position + 12)]))
        return "\"\(rest)\""
    }

    func error(_ message: String) -> QueryError {
        QueryError(column: position + 1, message: message)
    }
}
