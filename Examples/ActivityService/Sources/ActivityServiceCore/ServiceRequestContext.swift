import ActivityDomain
import Foundation
import Hummingbird
import HummingbirdAuth

/// The request context: who the bearer token says the caller is, and the
/// library's JSON (``ActivityJSON``) for bodies both ways, so that requests
/// and responses have the shapes of `Docs/Operations.md` and `eventlog --json`.
public struct ServiceRequestContext: AuthRequestContext, RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The user the bearer token names, once ``UserAuthenticator`` checked it.
    public var identity: String?

    public init(source: Source) {
        coreContext = .init(source: source)
        identity = nil
    }

    public var requestDecoder: ActivityJSONRequestDecoder { ActivityJSONRequestDecoder() }
    public var responseEncoder: ActivityJSONResponseEncoder { ActivityJSONResponseEncoder() }
}

/// Reads request bodies with ``ActivityJSON``: strict (an unknown member is
/// an error naming it), integers kept apart from doubles, bytes that are not
/// UTF-8 refused.
public struct ActivityJSONRequestDecoder: RequestDecoder {
    /// The largest body read, in bytes.
    public static let maxBody = 16 << 20

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        let body = try await request.body.collect(upTo: Self.maxBody)
        return try ActivityJSON.decode(type, from: Data(body.readableBytesView))
    }
}

/// Writes responses with ``ActivityJSON``: compact, keys sorted by UTF-8 bytes.
public struct ActivityJSONResponseEncoder: ResponseEncoder {
    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        JSONBody<JSONValue>.response(try ActivityJSON.bytes(value), status: .ok)
    }
}

/// A JSON response of a value, through ``ActivityJSON``, with a status.
public struct JSONBody<Value: Encodable>: ResponseGenerator {
    public var value: Value
    public var status: HTTPResponse.Status

    public init(_ value: Value, status: HTTPResponse.Status = .ok) {
        self.value = value
        self.status = status
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Self.response(try ActivityJSON.bytes(value), status: status)
    }

    /// The response with `headers` added (a `Location`).
    public func response(from request: Request, context: some RequestContext, headers: HTTPFields) throws -> Response {
        var response = try response(from: request, context: context)
        response.headers.append(contentsOf: headers)
        return response
    }
}

extension JSONBody {
    static func response(_ bytes: [UInt8], status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
