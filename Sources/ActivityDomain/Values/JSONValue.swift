import Foundation
import LMDB

/// A JSON document that keeps what Foundation's parsers lose: whether a
/// number was written as an integer (`42`) or not (`42.0`, `4e1`), the
/// order of object members as written, and the exact bytes of every string
/// (strings and member names are compared as bytes, never by canonical
/// equivalence). Serialization is deterministic: object keys sorted by
/// UTF-8 bytes, no insignificant whitespace.
///
/// ```swift
/// let value = try JSONValue(parsing: #"{"b":1,"a":[2.5,null]}"#)
/// value["b"]            // .integer(1)
/// value.serialized()    // {"a":[2.5,null],"b":1}
/// ```
///
/// The command line and ``ActivityCommand`` JSON lines use it.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Members in the order written. A parsed object never repeats a name
    /// (the parser rejects it); one built in code keeps the last value of a
    /// repeated name on lookup and when serialized.
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)): Name.equal(a, b)
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { Name.equal($0.key, $1.key) && $0.value == $1.value }
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(Name(serialized()))
    }

    /// The member named `key` (by its bytes) of an object (the last one when repeated).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { Name.equal($0.key, key) })?.value
    }

    /// An object from members; keys are sorted when serialized.
    public static func object(_ members: [String: JSONValue]) -> JSONValue {
        .object(members.map { (key: $0.key, value: $0.value) })
    }

    // MARK: Serializing

    /// Compact JSON with object keys sorted by UTF-8 bytes.
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    /// ``serialized()`` as UTF-8 bytes, written straight into a byte buffer
    /// (what a service sends).
    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return out
    }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            // Non-finite numbers have no JSON form; null is the usual stand-in.
            guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
            // Keep a double recognizable as one: a whole number gets ".0".
            let text = "\(d)"
            out.append(contentsOf: text.utf8)
            if !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
                out.append(contentsOf: ".0".utf8)
            }
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            // Keys sorted by their UTF-8 bytes; a repeated key (the same
            // bytes: names are bytes) keeps its last value.
            out.append(UInt8(ascii: "{"))
            // Members already in strictly ascending order (what the library's
            // values and its own output parsed back give) are written as they
            // are: no index array to sort for each object.
            if members.indices.dropFirst().allSatisfy({ members[$0 - 1].key.utf8.lexicographicallyPrecedes(members[$0].key.utf8) }) {
                for (n, member) in members.enumerated() {
                    if n > 0 { out.append(UInt8(ascii: ",")) }
                    JSONValue.writeString(member.key, to: &out)
                    out.append(UInt8(ascii: ":"))
                    member.value.write(to: &out)
                }
                out.append(UInt8(ascii: "}"))
                return
            }
            let order = members.indices.sorted { a, b in
                let left = members[a].key.utf8, right = members[b].key.utf8
                return left.elementsEqual(right) ? a < b : left.lexicographicallyPrecedes(right)
            }
            var first = true
            for (n, index) in order.enumerated() {
                if n + 1 < order.count, members[order[n + 1]].key.utf8.elementsEqual(members[index].key.utf8) { continue }
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.writeString(members[index].key, to: &out)
                out.append(UInt8(ascii: ":"))
                members[index].value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A string literal: its UTF-8 bytes as they are, but `"` and `\`
    /// escaped, and the control characters below U+0020 (`\n`, `\r`,
    /// `\t`, else `\u00XX`).
    private static func writeString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                out.append(contentsOf: bytes[start..<index])
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: "u00".utf8)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0xF)])
                }
                start = index + 1
            }
            out.append(contentsOf: bytes[start...])
        }
        out.append(UInt8(ascii: "\""))
    }

    // MARK: Parsing

    /// Parses one JSON document; throws ``JSONParseError`` with the line and
    /// column where it went wrong.
    public init(parsing text: String) throws {
        try self.init(parsing: Array(text.utf8))
    }

    /// Parses one JSON document from its UTF-8 bytes; a string or member
    /// name that is not valid UTF-8 is a ``JSONParseError`` naming where it
    /// is (never replaced by U+FFFD), and so is a member name given twice
    /// in one object (compared by bytes) and nesting deeper than
    /// ``maxDepth``.
    public init(parsing bytes: [UInt8]) throws {
        try self.init(parsing: bytes, maxDepth: JSONParser.maxDepth)
    }

    /// Parses JSON that this package wrote itself (a payload's Protocol
    /// Buffers JSON), which nests deeper than input may: each userInfo
    /// level is four levels there. `maxDepth` still bounds the recursion.
    init(parsing bytes: [UInt8], maxDepth: Int) throws {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        self = try parser.parseDocument()
    }

    /// The deepest arrays and objects may nest in a parsed document: the
    /// parser recurses once a level, and so do the walks of the value.
    public static let maxDepth = JSONParser.maxDepth
}

/// Malformed JSON, with where it went wrong (1-based line and column, the
/// column counting UTF-8 bytes).
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var reason: String
    public var description: String { "malformed JSON at line \(line), column \(column): \(reason)" }
}

/// A recursive-descent parser over UTF-8 bytes (RFC 8259), with a depth
/// limit, checked before it recurses, so that no input can overflow the
/// stack of any thread.
struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    static let maxDepth = 64
    /// This parser's limit (``maxDepth`` for input).
    var depthLimit = JSONParser.maxDepth

    init(bytes: [UInt8], maxDepth: Int = JSONParser.maxDepth) {
        self.bytes = bytes
        self.depthLimit = maxDepth
    }
    /// Where the parser is: member names and array indices, for messages.
    private var path: [PathStep] = []

    private enum PathStep {
        case member(String)
        case index(Int)
    }

    /// `items[0].attributeSet.title`; "the top level" when empty.
    private var pathText: String {
        guard !path.isEmpty else { return "the top level" }
        var text = ""
        for step in path {
            switch step {
            case .member(let name): text += text.isEmpty ? name : ".\(name)"
            case .index(let i): text += "[\(i)]"
            }
        }
        return text
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected characters after the JSON value") }
        return value
    }

    func error(_ reason: String, at offset: Int? = nil) -> JSONParseError {
        let offset = min(offset ?? index, bytes.count)
        var line = 1, lineStart = 0
        for i in 0..<offset where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        return JSONParseError(line: line, column: offset - lineStart + 1, reason: reason)
    }

    mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func parseValue() throws -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character, expected a value")
        }
    }

    mutating func expectLiteral(_ literal: String) throws {
        let start = index
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw error("invalid literal, expected \(literal)", at: start) }
            index += 1
        }
    }

    mutating func enter() throws {
        depth += 1
        if depth > depthLimit { throw error("arrays and objects nest deeper than \(depthLimit) levels (in \(pathText))") }
    }

    mutating func parseObject() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        var names = Set<Name>()   // for objects past a few members
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
            let keyStart = index
            let key = try parseString()
            // A name given twice is ambiguous (JSON leaves its meaning open): refused, by bytes.
            let repeated = members.count < 8 ? members.contains { Name.equal($0.key, key) } : !names.insert(Name(key)).inserted
            if members.count == 7 { names = Set(members.map { Name($0.key) } + [Name(key)]) }
            if repeated {
                throw error("member \"\(key)\" appears twice in \(pathText); each member at most once", at: keyStart)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
            index += 1
            skipWhitespace()
            path.append(.member(key))
            members.append((key, try parseValue()))
            path.removeLast()
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}' in an object")
        }
    }

    mutating func parseArray() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(values) }
        while true {
            skipWhitespace()
            path.append(.index(values.count))
            values.append(try parseValue())
            path.removeLast()
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(values) }
            throw error("expected ',' or ']' in an array")
        }
    }

    mutating func parseString() throws -> String {
        let start = index
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flush(_ end: Int) throws {
            guard end > runStart else { return }
            guard let run = String(validating: bytes[runStart..<end], as: UTF8.self) else {
                throw error("a string that is not valid UTF-8 in \(pathText); strings must be UTF-8", at: start)
            }
            scalars.append(contentsOf: run.unicodeScalars)
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try flush(index)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw error("control character in a string") }
            if byte == UInt8(ascii: "\\") {
                try flush(index)
                index += 1
                guard index < bytes.count else { throw error("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800..<0xDC00).contains(code) {
                        // A high surrogate must be followed by a low one.
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired surrogate in \\u escape")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate in \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("\\u escape is not a Unicode scalar") }
                    scalars.append(scalar)
                default: throw error("invalid escape \\\(Character(Unicode.Scalar(escape)))", at: index - 2)
                }
                runStart = index
                continue
            }
            index += 1
        }
    }

    mutating func parseHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        let intStart = index
        let intDigits = digits()
        guard intDigits > 0 else { throw error("invalid number", at: start) }
        if intDigits > 1 && bytes[intStart] == UInt8(ascii: "0") { throw error("leading zero in a number", at: start) }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard digits() > 0 else { throw error("expected digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw error("expected digits in the exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger {
            guard let value = Int64(text) else { throw error("integer \(text) does not fit in 64 bits", at: start) }
            return .integer(value)
        }
        guard let value = Double(text), value.isFinite else { throw error("number \(text) is out of range", at: start) }
        return .double(value)
    }
}
