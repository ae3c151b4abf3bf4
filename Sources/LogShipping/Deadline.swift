/// Runs `operation`, or throws a transient ``ShippingError`` when it takes
/// longer than `limit` (and cancels it). PostgreSQL work is bounded so that a
/// server that vanished without closing the socket, or a connection attempt
/// that never completes, turns into a retry instead of a silent stall.
func withDeadline<T: Sendable>(_ limit: Duration, _ what: String,
                               _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw ShippingError(.unavailable, operation: what, "no answer from PostgreSQL within \(limit)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
