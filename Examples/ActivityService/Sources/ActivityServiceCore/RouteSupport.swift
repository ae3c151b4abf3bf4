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
        guard let decoded = raw.removingPercentEncoding else {
            throw ServiceError(.badRequest, code: "invalidValue", message: "path parameter \(name) \"\(raw)\" is not percent-encoded UTF-8")
        }
        return decoded
    }
}

extension Request {
    /// The query parameter `name` (percent-decoded), or nil.
    func query(_ name: String) -> String? {
        uri.queryParameters.get(name)
    }

    /// `now` for expiry decisions: `?now=` (ISO-8601) or the clock.
    func now() throws -> Date {
        guard let text = query("now") else { return Date() }
        guard let date = ISO8601Time.date(from: text) else {
            throw ServiceError(.badRequest, code: "invalidValue", message: "now \"\(text)\" is not an ISO-8601 time such as 2026-11-22T10:00:00Z")
        }
        return date
    }

    /// An integer query parameter in `range`, or `default`.
    func integer(_ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = query(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw ServiceError(.badRequest, code: "invalidValue", message: "\(name) \"\(text)\"; allowed: \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// A position query parameter (`after`, `from`), or nil.
    func position(_ name: String) throws -> UInt64? {
        guard let text = query(name) else { return nil }
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
