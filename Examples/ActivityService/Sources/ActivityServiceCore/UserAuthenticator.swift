import Foundation
import Hummingbird
import HummingbirdAuth

/// Reads `Authorization: Bearer <token>` (hummingbird-auth's `bearer`),
/// checks the token (``BearerToken``) and names the request's user: every
/// route under it acts in that user's space and no other, so a token for
/// alice can never read or change bob's data. No token, or a token that
/// does not check, is 401 with the reason.
public struct UserAuthenticator: AuthenticatorMiddleware {
    public typealias Context = ServiceRequestContext
    let key: [UInt8]

    public init(key: [UInt8]) { self.key = key }

    public func authenticate(request: Request, context: ServiceRequestContext) async throws -> String? {
        guard let bearer = request.headers.bearer else {
            throw ServiceError(.unauthorized, code: "unauthorized", message: "send Authorization: Bearer <token> (a token naming the user)")
        }
        do {
            return try BearerToken.verify(bearer.token, key: key, now: Date())
        } catch let error as TokenError {
            throw ServiceError(.unauthorized, code: "unauthorized", message: error.description)
        }
    }
}
