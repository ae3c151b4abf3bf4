import ActivityDomain
import Foundation
import TextIndex
import Hummingbird
import TextIndex

extension ServiceRequestContext {
    /// The space of the user the token names: every route acts there alone.
    func space(in store: ActivityStore) throws -> UserSpace {
        store.user(try requireIdentity())
    }

    /// The path parameter `name`, percent-decoded; bytes that are not UTF-8 are refused.
    func pathParameter(_ name: String) throws -> String {
        let raw = try parameters.require(name)
        // A byte past ASCII must come percent-encoded: raw, it reached us already
        // decoded as UTF-8, an invalid one replaced by U+FFFD, another name.
        guard raw.utf8.allSatisfy({ $0 < 0x80 }), let decoded = raw.removingPercentEncoding else {
            throw ServiceError(.badRequest, code: "invalidValue", message: "path parameter \(name) \"\(raw)\" is not percent-encoded UTF-8")
        }
        return decoded
    }
}

extension Request {
    /// The query parameter `name`, percent-decoded, or nil. Names are
    /// bytes (SPEC §2): a value whose bytes are not UTF-8, or with a byte
    /// past ASCII not percent-encoded, is refused, never read as U+FFFD
    /// (Hummingbird's `queryParameters` decodes leniently); so is a
    /// parameter given twice.
    func query(_ name: String) throws -> String? {
        guard let raw = uri.query else { return nil }
        var found: String?
        for pair in raw.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            guard Self.percentDecoded(pair[..<equals]).map({ $0.elementsEqual(name.utf8) }) == true else { continue }
            let value = equals == pair.endIndex ? pair[equals...] : pair[pair.index(after: equals)...]
            guard let bytes = Self.percentDecoded(value), let text = String(validating: bytes, as: UTF8.self) else {
                throw ServiceError(.badRequest, code: "invalidValue",
                                   message: "query parameter \(name) is not percent-encoded UTF-8 (every byte past ASCII percent-encoded, the bytes UTF-8)")
            }
            guard found == nil else {
                throw ServiceError(.badRequest, code: "invalidValue", message: "query parameter \(name) is given twice; at most once")
            }
            found = text
        }
        return found
    }

    /// `bytes` with `%XX` decoded; nil for a `%` without two hex digits, or a raw byte past ASCII.
    static func percentDecoded(_ bytes: Substring.UTF8View.SubSequence) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            guard byte < 0x80 else { return nil }
            if byte == UInt8(ascii: "%") {
                let high = bytes.index(after: index)
                guard high != bytes.endIndex, bytes.index(after: high) != bytes.endIndex,
                      let h = hexDigit(bytes[high]), let l = hexDigit(bytes[bytes.index(after: high)]) else { return nil }
                out.append(h << 4 | l)
                index = bytes.index(high, offsetBy: 2)
            } else {
                out.append(byte)
                index = bytes.index(after: index)
            }
        }
        return out
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `now` for expiry decisions: `?now=` (ISO-8601) or the clock.
    func now() throws -> Date {
        guard let text = try query("now") else { return Date() }
        guard let date = ISO8601Time.date(from: text) else {
            throw ServiceError(.badRequest, code: "invalidValue", message: "now \"\(text)\" is not an ISO-8601 time such as 2026-11-22T10:00:00Z")
        }
        return date
    }

    /// An integer query parameter in `range`, or `default`.
    func integer(_ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = try query(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw ServiceError(.badRequest, code: "invalidValue", message: "\(name) \"\(text)\"; allowed: \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// A position query parameter (`after`, `from`), or nil.
    func position(_ name: String) throws -> UInt64? {
        guard let text = try query(name) else { return nil }
        guard let position = UInt64(text) else {
            throw ServiceError(.badRequest, code: "invalidValue", message: "\(name) \"\(text)\" is not a log position")
        }
        return position
    }

    /// The body, read as the members of operation `op` (Docs/Operations.md)
    /// and decoded as `eventlog apply` decodes that line: strict, with the
    /// same errors. `user` and `at` are not taken from a body: the token
    /// names the user, the store's clock the time.
    func operation(_ op: String, context: ServiceRequestContext, adding members: [(key: String, value: JSONValue)] = [])
        async throws -> ActivityCommand {
        var body = try await decode(as: JSONValue.self, context: context)
        if case .object = body {} else if body == .null { body = .object([]) }
        guard case .object(let given) = body else {
            throw ServiceError(.badRequest, code: "malformedOperation", message: "the body must be a JSON object (the members of \(op))")
        }
        for name in ["op", "user", "at"] where given.contains(where: { $0.key == name }) {
            throw ServiceError(.badRequest, code: "malformedOperation",
                               message: "\(name) is not taken from the body: the route names the operation, the token the user, the store the time")
        }
        return try OperationDecoder().decode(.object([("op", .string(op))] + members + given)).command
    }
}

/// The empty JSON body `{}`: what a route that acted but returns nothing answers.
struct Nothing: Encodable {}
