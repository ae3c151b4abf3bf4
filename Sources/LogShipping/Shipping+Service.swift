import EventLog
import ServiceLifecycle

/// A shipper in a `ServiceGroup` (swift-service-lifecycle): it ships until
/// the group shuts down. A batch is one PostgreSQL transaction, so stopping
/// between or inside batches loses nothing: the next run resumes at
/// PostgreSQL's head. Put it after the store in the group's services, so
/// that it stops before the store closes.
///
/// ```swift
/// let shipper = try LogShipper(store: store.eventStore, to: PostgresLocation(url: url), stream: "shard-1")
/// let group = ServiceGroup(configuration: .init(services: [store, shipper, httpServer], logger: logger))
/// ```
extension LogShipper: Service {
    /// Ships until the group's graceful shutdown or cancellation; a fork, a
    /// fence or a damaged log ends it with its error.
    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                _ = try await self.run(once: false, progress: nil)
            }
        } catch where Task.isCancelled || Task.isShuttingDownGracefully {
            // Stopped on purpose: PostgreSQL's head (or the store's) says where to resume.
            return
        }
    }
}

/// A follower in a `ServiceGroup`: it follows the stream until the group
/// shuts down. Each batch it appends commits through the store's write path,
/// so stopping loses nothing; the next run resumes at the store's head.
extension LogFollower: Service {
    /// Follows until the group's graceful shutdown or cancellation; a fork
    /// ends it with its error.
    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                _ = try await self.run(once: false, through: nil, progress: nil)
            }
        } catch where Task.isCancelled || Task.isShuttingDownGracefully {
            // Stopped on purpose: PostgreSQL's head (or the store's) says where to resume.
            return
        }
    }
}
