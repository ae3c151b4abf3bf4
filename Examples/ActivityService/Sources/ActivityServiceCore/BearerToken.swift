import ActivityDomain
import Crypto
import Foundation

/// A user's bearer token: a JSON Web Token signed with HMAC-SHA256 (`HS256`)
/// by the key the service was given, naming the user in `sub` and ending at
/// `exp`. Any JWT library issues such tokens (an identity provider, a login
/// service); ``issue(user:expires:key:)`` is here for development and tests.
///
/// ```swift
/// let token = BearerToken.issue(user: "alice", expires: Date().addingTimeInterval(3600), key: key)
/// let user = try BearerToken.verify(token, key: key, now: Date())   // "alice"
/// ```
///
/// Why not jwt-kit: its swift-crypto 4 requirement cannot resolve beside the
/// library's swift-crypto 3; HS256 is 40 lines over swift-crypto's HMAC, and
/// hummingbird-auth does the middleware part.
public enum BearerToken {
    /// A token for `user`, valid until `expires`.
    public static func issue(user: String, expires: Date, key: [UInt8]) -> String {
        let header = base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims: JSONValue = .object([("sub", .string(user)), ("exp", .integer(Int64(expires.timeIntervalSince1970.rounded(.down))))])
        let payload = base64URL(Array(claims.serialized().utf8))
        let signature = HMAC<SHA256>.authenticationCode(for: Array("\(header).\(payload)".utf8), using: SymmetricKey(data: key))
        return "\(header).\(payload).\(base64URL(Array(signature)))"
    }

    /// The user a valid token names; throws ``TokenError`` saying why a
    /// token is not valid (malformed, another algorithm, a bad signature,
    /// expired). The signature is checked in constant time, before anything
    /// of the payload is believed.
    public static func verify(_ token: String, key: [UInt8], now: Date) throws -> String {
        try verifyWithExpiry(token, key: key, now: now).user
    }

    /// ``verify(_:key:now:)``, with when the token expires.
    public static func verifyWithExpiry(_ token: String, key: [UInt8], now: Date) throws -> (user: String, expires: Date) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = decodeBase64URL(parts[0]), let payload = decodeBase64URL(parts[1]),
              let signature = decodeBase64URL(parts[2]) else {
            throw TokenError("the token is not three base64url parts (a JWT)")
        }
        guard let headerText = String(validating: header, as: UTF8.self), let headerJSON = try? JSONValue(parsing: headerText),
              headerJSON["alg"] == .string("HS256") else {
            throw TokenError("the token's algorithm is not HS256")
        }
        let signed = Array("\(parts[0]).\(parts[1])".utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: SymmetricKey(data: key)) else {
            throw TokenError("the token's signature does not match")
        }
        guard let claimsText = String(validating: payload, as: UTF8.self), let claims = try? JSONValue(parsing: claimsText),
              case .string(let user)? = claims["sub"] else {
            throw TokenError("the token names no user (sub)")
        }
        guard case .integer(let expires)? = claims["exp"] else { throw TokenError("the token has no expiry (exp)") }
        guard Double(expires) > now.timeIntervalSince1970 else { throw TokenError("the token expired") }
        return (user, Date(timeIntervalSince1970: Double(expires)))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decodeBase64URL(_ text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}

/// Why a bearer token was refused (the service answers 401).
public struct TokenError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
