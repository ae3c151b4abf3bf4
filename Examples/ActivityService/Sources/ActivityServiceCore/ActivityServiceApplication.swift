import ActivityDomain
import EventLog
import Foundation
import Hummingbird
import NIOCore
import Logging
import ServiceLifecycle

/// The service: the store (a `Service` that closes on graceful shutdown),
/// the routes under `/v1` for the token's user, `/health` and `/metrics`.
///
/// ```swift
/// let app = try ActivityServiceApplication.make(configuration: ServiceConfiguration())
/// try await app.runService()        // until SIGTERM or SIGINT: requests drain, then the store closes
/// ```
///
/// On graceful shutdown the server stops first (Hummingbird runs its
/// services before the server, and a ServiceGroup stops them in reverse
/// order): it takes no new connection and lets the requests in flight
/// finish, change feeds end; then the store closes, after its last write.
public enum ActivityServiceApplication {
    /// The application over the store at `configuration.storePath` (opened
    /// here), or over `store` when one is given (a test's).
    public static func make(configuration: ServiceConfiguration, store given: ActivityStore? = nil, logger: Logger? = nil,
                            onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in })
        throws -> some ApplicationProtocol {
        ServiceMetrics.bootstrap()
        var logger = logger ?? Logger(label: "activity-service")
        logger[metadataKey: "store"] = "\(configuration.storePath)"
        var options = configuration.storeOptions
        options.store.logger = logger
        let store = try given ?? ActivityStore.open(path: configuration.storePath, options: options)
        if !configuration.activityTypes.isEmpty { try store.declareActivityTypes(configuration.activityTypes) }
        let router = makeRouter(store: store, configuration: configuration)
        return Application(router: router,
                           configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "activity-service"),
                           services: [store], onServerRunning: onServerRunning, logger: logger)
    }

    /// The routes (for tests with HummingbirdTesting's router client too).
    public static func makeRouter(store: ActivityStore, configuration: ServiceConfiguration) -> Router<ServiceRequestContext> {
        let router = Router(context: ServiceRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: ErrorMiddleware())
        router.get("health") { _, _ in
            JSONBody(JSONValue.object([("status", .string("ok")), ("head", .integer(Int64(try store.head())))]))
        }
        router.get("metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: ServiceMetrics.registry.emitToBuffer())))
        }
        let api = router.group("v1").add(middleware: UserAuthenticator(key: configuration.signingKey))
        ActivityRoutes(store: store).add(to: api)
        ItemRoutes(store: store).add(to: api)
        SearchRoutes(store: store, afterTimeout: configuration.afterTimeout).add(to: api)
        ChangeFeedRoute(store: store).add(to: api)
        return router
    }
}
