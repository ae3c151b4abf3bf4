import HTTPTypes
import Hummingbird

/// Echoes a request's `X-Request-Id` on its response (on errors too), so
/// that a client, a proxy's log or a load generator pairs each answer with
/// its request.
public struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let id = request.headers[.requestID] else { return try await next(request, context) }
        do {
            var response = try await next(request, context)
            response.headers[.requestID] = id
            return response
        } catch {
            var response = try ServiceError(error).response(from: request, context: context)
            response.headers[.requestID] = id
            return response
        }
    }
}

extension HTTPField.Name {
    static let requestID = Self("X-Request-Id")!
}
