import EventLog
import Foundation
import ServiceLifecycle

extension ActivityStore {
    /// Opens (or creates) the store in directory `path`: the same as
    /// ``init(path:options:)``, under the name a service reads next to
    /// ``close()``.
    ///
    /// ```swift
    /// let store = try ActivityStore.open(path: "/var/lib/app/activities")
    /// defer { store.close() }
    /// ```
    public static func open(path: String, options: ActivityStoreOptions = ActivityStoreOptions()) throws -> ActivityStore {
        try ActivityStore(path: path, options: options)
    }

    /// Closes the store (``EventLog/EventStore/close()``): commands already
    /// started finish and are acknowledged; commands and reads from now on
    /// throw ``EventLog/EventLogError/Code/storeClosed`` (`catch
    /// EventLogError.storeClosed`); change feeds end with it; once nothing
    /// of this process uses the environment it closes, and the directory
    /// can be opened again or compacted in this process. Closing twice does
    /// nothing more.
    ///
    /// ```swift
    /// store.close()
    /// try ActivityStore.compact(path: path)         // the same process
    /// let reopened = try ActivityStore.open(path: path)
    /// ```
    ///
    /// It waits for the writes in flight (milliseconds: a commit or two).
    public func close() {
        eventStore.close()
    }

    /// Whether ``close()`` has begun.
    public var isClosed: Bool { eventStore.isClosed }
}

/// A store in a `ServiceGroup` (swift-service-lifecycle): it runs until the
/// group shuts down, then closes gracefully: commands in flight finish and
/// are acknowledged, then the store closes. Put it before the services that
/// use it (an HTTP server), so that they stop first: a group shuts its
/// services down in reverse order.
///
/// ```swift
/// let store = try ActivityStore.open(path: path)
/// let group = ServiceGroup(configuration: .init(
///     services: [store, httpServer],                // the server stops first, then the store closes
///     gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
/// try await group.run()
/// ```
extension ActivityStore: Service {
    /// Waits for the group's graceful shutdown (or cancellation), then closes the store.
    public func run() async throws {
        try? await gracefulShutdown()
        // Waiting for the writes in flight blocks: off the cooperative threads.
        _ = try? await BlockingWork.run { self.close() }
    }
}

extension ActivityStore {
    /// Returns once the store's views hold `position` (a write's
    /// `CommandResult.positions`): read-your-writes on a follower, or
    /// beside another process that writes
    /// (``EventLog/EventStore/waitForPosition(_:timeout:pollInterval:)``).
    /// Throws `EventLogError.timedOut` after `timeout`.
    ///
    /// ```swift
    /// let result = try await leader.user("alice").becomeCurrent("a1")
    /// try await follower.waitForPosition(result.positions!.upperBound, timeout: .seconds(2))
    /// let current = try await follower.user("alice").currentActivities()   // a1 is there
    /// ```
    public func waitForPosition(_ position: Position, timeout: Duration) async throws {
        try await eventStore.waitForPosition(position, timeout: timeout)
    }
}
