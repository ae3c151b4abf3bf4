import EventLog

/// An error of shipping, following or restoring, with what an operator needs
/// to act: the operation, what was wrong and what is allowed, and the
/// position when one is concerned.
///
/// ```swift
/// do { try await shipper.run() }
/// catch let error as ShippingError where error.code == .fenced { stop: another leader took over }
/// ```
public struct ShippingError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// A URL, stream name or position is not acceptable.
        case invalidArgument
        /// PostgreSQL cannot be reached or failed; retrying may succeed.
        case unavailable
        /// The histories differ: a record's link does not follow, or one
        /// side is ahead of the other where it must not be.
        case diverged
        /// Another leader took over the stream (a newer epoch): this store
        /// may no longer ship to it.
        case fenced
        /// The stream does not exist in PostgreSQL, or a record is missing from it.
        case missing
        /// The store is not in the state the operation needs (e.g. a
        /// follower not caught up asked to take over).
        case refused
    }

    public var code: Code
    public var operation: String
    public var message: String
    public var position: Position?

    public init(_ code: Code, operation: String, _ message: String, position: Position? = nil) {
        self.code = code
        self.operation = operation
        self.message = message
        self.position = position
    }

    public var description: String {
        if let position { return "\(operation): \(message) (position \(position))" }
        return "\(operation): \(message)"
    }

    /// Whether trying again later may succeed (PostgreSQL down or restarting).
    public var isTransient: Bool { code == .unavailable }
}
