import ActivityDomain
import EventLog
import Foundation
import Hummingbird
import TextIndex

/// An error as the service answers it: a status and a JSON body
/// `{"error":{"code","message",…}}`, the code stable for clients to switch on.
///
/// ``init(_:)`` maps the library's errors in one switch (`Docs/Services.md`,
/// "Errors"): a rejected command (``ActivityError``) is 400, but 404 for
/// `unknownActivity`, 409 for `activityAlreadyExists`,
/// `activityInvalidated` and `mismatchedClientState`, 410 for
/// `userForgotten`; a store that is closed or busy, or a wait for a
/// position that timed out, is 503; a head that moved is 409; a malformed
/// query or body is 400, and so is a query past its limits (503 past its
/// deadline); anything else is 500.
public struct ServiceError: Error, HTTPResponseError {
    public var status: HTTPResponse.Status
    /// The body's `error` object.
    public var body: JSONValue

    public init(_ status: HTTPResponse.Status, code: String, message: String) {
        self.status = status
        body = .object([("code", .string(code)), ("message", .string(message))])
    }

    init(_ status: HTTPResponse.Status, body: JSONValue) {
        self.status = status
        self.body = body
    }

    /// The answer to `error`, which a route threw.
    public init(_ error: any Error) {
        switch error {
        case let error as ServiceError:
            self = error
        case let error as ActivityError:
            let body = (try? ActivityJSON.value(error)) ?? .object([("code", .string(error.code.rawValue))])
            self.init(Self.status(of: error.code), body: body)
        case let error as EventLogError:
            self.init(Self.status(of: error.code), code: error.code.rawValue, message: error.description)
        case let error as QueryError:
            self.init(.badRequest, code: "malformedQuery", message: "\(error)")
        case let error as QueryLimitError:
            // Past its deadline: the service is short of time; past another bound: narrow the query.
            self.init(error.limit == .timeout ? .serviceUnavailable : .badRequest,
                      code: error.limit == .timeout ? "queryTimedOut" : "queryTooCostly", message: error.description)
        case let error as JSONParseError:
            self.init(.badRequest, code: "malformedJSON", message: error.description)
        case let error as DecodingError:
            self.init(.badRequest, code: "malformedJSON", message: "\(error)")
        case let error as HTTPError:
            self.init(error.status, code: "http", message: error.body ?? error.status.reasonPhrase)
        default:
            self.init(.internalServerError, code: "internal", message: "\(error)")
        }
    }

    /// The status of a rejected command.
    static func status(of code: ActivityError.Code) -> HTTPResponse.Status {
        switch code {
        case .unknownActivity: .notFound
        case .activityAlreadyExists, .activityInvalidated, .mismatchedClientState: .conflict
        case .userForgotten: .gone
        default: .badRequest
        }
    }

    /// The status of an engine error.
    static func status(of code: EventLogError.Code) -> HTTPResponse.Status {
        switch code {
        case .storeClosed, .storeBusy, .timedOut, .viewsStale, .indexBehind: .serviceUnavailable
        case .headMismatch: .conflict
        case .invalidArgument: .badRequest
        default: .internalServerError
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONBody<JSONValue>.response(JSONValue.object([("error", body)]).serializedBytes(), status: status)
    }
}

/// Turns whatever a route throws into its ``ServiceError`` answer, so that
/// every failure is JSON with a stable code.
public struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            throw ServiceError(error)
        }
    }
}
