import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `body` between `BEGIN` and `COMMIT` on this connection.
    ///
    /// Unlike PostgresNIO's `withTransaction`, a `body` that throws is not
    /// followed by a `ROLLBACK`: the caller closes the connection after any
    /// error (``closeWithoutWaiting(_:)``), and PostgreSQL rolls back the
    /// transaction of a connection that ends. A `ROLLBACK` sent on a
    /// connection that a failed socket write had closed never completed
    /// (PostgresNIO 1.x), which left `ship` waiting for its deadline (found by
    /// the fault sweep). A failed `BEGIN` or `COMMIT` is a transient
    /// ``ShippingError`` that says which; after a failed `COMMIT` the
    /// transaction may or may not have committed, which is why a shipper
    /// starts again from PostgreSQL's head.
    ///
    /// ```swift
    /// let head = try await connection.inTransaction(logger: logger) { c in try await tables.head(on: c, forUpdate: true) }
    /// ```
    func inTransaction<R>(logger: Logger, operation: String,
                          _ body: (PostgresConnection) async throws -> R) async throws -> R {
        do {
            try await query("BEGIN", logger: logger)
        } catch {
            throw ShippingError(.unavailable, operation: operation, "begin failed: \(describe(error))")
        }
        let value = try await body(self)
        do {
            try await query("COMMIT", logger: logger)
        } catch {
            throw ShippingError(.unavailable, operation: operation, "commit failed: \(describe(error))")
        }
        return value
    }
}
