import Foundation
import PostgresNIO

/// Where a stream lives: a PostgreSQL server and database, from a URL in
/// libpq's form.
///
/// ```
/// postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]
/// postgres://USER@/DATABASE?host=/var/run/postgresql        (a unix socket directory)
/// ```
///
/// `sslmode` defaults to `disable`; `require` verifies the server's
/// certificate against the system's trust store. The password is never
/// printed: ``description`` leaves it out.
public struct PostgresLocation: Sendable, CustomStringConvertible {
    public let configuration: PostgresConnection.Configuration
    /// The URL without its password, for messages.
    public let description: String

    public init(url text: String) throws {
        func bad(_ why: String) -> ShippingError {
            ShippingError(.invalidArgument, operation: "connect",
                          "URL \"\(Self.redacted(text))\": \(why); allowed: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require][&host=SOCKET_DIR]")
        }
        guard let components = URLComponents(string: text) else { throw bad("not a URL") }
        guard let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme) else {
            throw bad("the scheme is \"\(components.scheme ?? "")\", not postgres or postgresql")
        }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw bad("no user")
        }
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        var database = components.path
        if database.hasPrefix("/") { database.removeFirst() }
        database = database.removingPercentEncoding ?? database
        var sslmode = "disable"
        var socketDirectory: String?
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode": sslmode = item.value ?? ""
            case "host": socketDirectory = item.value
            default: throw bad("unknown parameter \(item.name)")
            }
        }
        let port = components.port ?? 5432
        if let socketDirectory {
            guard socketDirectory.hasPrefix("/") else { throw bad("host=\(socketDirectory) is not an absolute socket directory") }
            configuration = PostgresConnection.Configuration(
                unixSocketPath: (socketDirectory as NSString).appendingPathComponent(".s.PGSQL.\(port)"),
                username: user, password: password, database: database.isEmpty ? nil : database)
        } else {
            guard let host = components.host, !host.isEmpty else { throw bad("no host") }
            let tls: PostgresConnection.Configuration.TLS
            switch sslmode {
            case "disable": tls = .disable
            case "prefer": tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case "require": tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            default: throw bad("sslmode=\(sslmode) is not disable, prefer or require")
            }
            configuration = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: password,
                database: database.isEmpty ? nil : database, tls: tls)
        }
        description = Self.redacted(text)
    }

    /// `text` with the password replaced by `***`.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? text
    }

    func connect(logger: Logger) async throws -> PostgresConnection {
        do {
            let configuration = self.configuration
            return try await withDeadline(.seconds(15), "connect") {
                try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            }
        } catch {
            throw ShippingError(.unavailable, operation: "connect", "cannot connect to \(description): \(describe(error))")
        }
    }
}

/// A PostgreSQL error as a person can act on it: PostgresNIO's own
/// description hides the server's message.
func describe(_ error: any Error) -> String {
    if let error = error as? PSQLError {
        var parts: [String] = []
        if let message = error.serverInfo?[.message] { parts.append(message) }
        if let state = error.serverInfo?[.sqlState] { parts.append("SQLSTATE \(state)") }
        if parts.isEmpty {
            parts.append(error.code == .serverClosedConnection
                ? "the connection to PostgreSQL closed (serverClosedConnection)" : "\(error.code)")
        }
        // What broke the connection (a reset, a refused write), when PostgresNIO kept it.
        if let underlying = error.underlying { parts.append("\(underlying)") }
        return parts.joined(separator: ", ")
    }
    if let error = error as? PostgresTransactionError {
        if let inner = error.closureError { return describe(inner) }
        if let inner = error.commitError { return "commit failed: " + describe(inner) }
        if let inner = error.beginError { return "begin failed: " + describe(inner) }
    }
    return "\(error)"
}

/// Closes a connection without waiting for it: awaiting `close()` on a
/// connection the server dropped (a crash, a restart) can wait forever, and a
/// shipper must move on to its next attempt.
func closeWithoutWaiting(_ connection: PostgresConnection) {
    let closed: EventLoopFuture<Void> = connection.close()
    closed.whenComplete { _ in withExtendedLifetime(connection) {} }   // alive until closed
}
