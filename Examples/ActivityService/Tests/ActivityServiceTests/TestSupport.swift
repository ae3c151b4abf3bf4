import ActivityDomain
import ActivityServiceCore
import EventLog
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The key tests sign tokens with.
let testKey = Array("a test key of thirty-two bytes or more".utf8)

func token(_ user: String, key: [UInt8] = testKey, expires: Date = Date().addingTimeInterval(3600)) -> String {
    BearerToken.issue(user: user, expires: expires, key: key)
}

func temporaryDirectory() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("activity-service-tests-\(UUID().uuidString)").path
}

/// A configuration for tests: a fresh store directory, any free port, no fsync.
func testConfiguration() -> ServiceConfiguration {
    var options = ActivityStoreOptions()
    options.store.durability = .noSync
    return ServiceConfiguration(storePath: temporaryDirectory(), port: 0, signingKey: testKey, storeOptions: options)
}

/// Runs `body` with the application over a fresh store, then closes and removes the store.
func withService<R>(_ setup: TestingSetup = .router, _ body: @Sendable (any TestClientProtocol, ActivityStore) async throws -> R) async throws -> R {
    let configuration = testConfiguration()
    defer { try? FileManager.default.removeItem(atPath: configuration.storePath) }
    let store = try ActivityStore.open(path: configuration.storePath, options: configuration.storeOptions)
    defer { store.close() }
    let app = try ActivityServiceApplication.make(configuration: configuration, store: store)
    return try await app.test(setup) { client in try await body(client, store) }
}


extension TestClientProtocol {
    /// A request as `user` (a valid token for them), with a JSON body.
    @discardableResult
    func call(_ method: HTTPRequest.Method, _ uri: String, as user: String?, json body: String? = nil,
              headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers = extra
        if let user { headers[.authorization] = "Bearer \(token(user))" }
        if body != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var json: JSONValue { (try? JSONValue(parsing: text)) ?? .null }
    /// The `code` of an error body.
    var errorCode: String? {
        guard case .string(let code)? = json["error"]?["code"] else { return nil }
        return code
    }
}
