import ActivityDomain
import Foundation

/// How the service runs: read from the environment by ``init(environment:)``.
///
/// | variable | default | what |
/// |---|---|---|
/// | `ACTIVITY_SERVICE_KEY` | (required) | the key bearer tokens are signed with (HMAC-SHA256), 32 bytes or more |
/// | `ACTIVITY_STORE` | `./activity-store` | the store's directory (created when missing) |
/// | `ACTIVITY_HOST`, `ACTIVITY_PORT` | `127.0.0.1`, `8080` | where it listens |
/// | `ACTIVITY_TYPES` | `com.example.app.viewOrder,com.example.app.editOrder` | activity types declared at start (Info.plist's `NSUserActivityTypes`) |
/// | `ACTIVITY_DURABILITY` | `durable` | `durable`, `noMetaSync` or `noSync` (`Docs/Architecture.md`, "Durability") |
public struct ServiceConfiguration: Sendable {
    public var storePath: String
    public var host: String
    public var port: Int
    /// The key tokens are signed and checked with.
    public var signingKey: [UInt8]
    /// Declared when the service starts (declaring twice changes nothing).
    public var activityTypes: [String]
    public var storeOptions: ActivityStoreOptions
    /// How long a search or query with `after` waits for the store to reach that position.
    public var afterTimeout: Duration = .seconds(2)

    public init(storePath: String, host: String = "127.0.0.1", port: Int = 8080, signingKey: [UInt8],
                activityTypes: [String] = ServiceConfiguration.defaultActivityTypes,
                storeOptions: ActivityStoreOptions = ActivityStoreOptions()) {
        self.storePath = storePath
        self.host = host
        self.port = port
        self.signingKey = signingKey
        self.activityTypes = activityTypes
        self.storeOptions = storeOptions
    }

    public static let defaultActivityTypes = ["com.example.app.viewOrder", "com.example.app.editOrder"]

    /// The configuration the environment gives; throws naming the variable that is wrong.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let key = environment["ACTIVITY_SERVICE_KEY"], key.utf8.count >= 32 else {
            throw ConfigurationError("ACTIVITY_SERVICE_KEY must hold the token signing key, 32 bytes or more "
                + "(e.g. ACTIVITY_SERVICE_KEY=$(openssl rand -hex 32))")
        }
        let portText = environment["ACTIVITY_PORT"] ?? "8080"
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw ConfigurationError("ACTIVITY_PORT is \"\(portText)\"; allowed: a port, 0 to 65535")
        }
        var options = ActivityStoreOptions()
        switch environment["ACTIVITY_DURABILITY"] ?? "durable" {
        case "durable": options.store.durability = .durable
        case "noMetaSync": options.store.durability = .noMetaSync
        case "noSync": options.store.durability = .noSync
        case let other: throw ConfigurationError("ACTIVITY_DURABILITY is \"\(other)\"; allowed: durable, noMetaSync, noSync")
        }
        let types = environment["ACTIVITY_TYPES"].map { $0.split(separator: ",").map(String.init) } ?? Self.defaultActivityTypes
        self.init(storePath: environment["ACTIVITY_STORE"] ?? "./activity-store", host: environment["ACTIVITY_HOST"] ?? "127.0.0.1",
                  port: port, signingKey: Array(key.utf8), activityTypes: types, storeOptions: options)
    }
}

/// A setting the service cannot start with.
public struct ConfigurationError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
