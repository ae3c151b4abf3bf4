import Foundation
import Hummingbird
import HummingbirdAuth

/// Reads `Authorization: Bearer <token>` (hummingbird-auth's `bearer`),
/// checks the token (``BearerToken``) and names the request's user: every
/// route under it acts in that user's space and no other, so a token for
/// alice can never read or change bob's data. No token, or a token that
/// does not check, is 401 with the reason.
///
/// A token checked once is remembered (``VerifiedTokens``) until it expires:
/// a device sends the same token with every request, and checking its
/// signature each time cost a tenth of the service's CPU under load.
public struct UserAuthenticator: AuthenticatorMiddleware {
    public typealias Context = ServiceRequestContext
    let key: [UInt8]
    let verified = VerifiedTokens()

    public init(key: [UInt8]) { self.key = key }

    public func authenticate(request: Request, context: ServiceRequestContext) async throws -> String? {
        guard let bearer = request.headers.bearer else {
            throw ServiceError(.unauthorized, code: "unauthorized", message: "send Authorization: Bearer <token> (a token naming the user)")
        }
        let now = Date()
        if let user = verified.user(of: bearer.token, at: now) { return user }
        do {
            let (user, expires) = try BearerToken.verifyWithExpiry(bearer.token, key: key, now: now)
            verified.remember(bearer.token, user: user, expires: expires)
            return user
        } catch let error as TokenError {
            throw ServiceError(.unauthorized, code: "unauthorized", message: error.description)
        }
    }
}

/// Tokens whose signature checked, with their user and expiry: at most
/// ``capacity``, forgotten all at once when full (a bound on memory, not a
/// policy: a forgotten token is simply checked again). Keyed by the
/// token's bytes (not `String`, whose `==` is canonical equivalence), so
/// only the exact bytes that checked are taken.
public final class VerifiedTokens: @unchecked Sendable {
    public static let capacity = 10_000
    private let lock = NSLock()
    private var entries: [[UInt8]: (user: String, expires: Date)] = [:]

    public init() {}

    /// The user of a token that checked and has not expired at `now`.
    public func user(of token: String, at now: Date) -> String? {
        let key = Array(token.utf8)
        return lock.withLock {
            guard let entry = entries[key] else { return nil }
            guard entry.expires > now else {
                entries[key] = nil
                return nil
            }
            return entry.user
        }
    }

    public func remember(_ token: String, user: String, expires: Date) {
        lock.withLock {
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[Array(token.utf8)] = (user, expires)
        }
    }
}
