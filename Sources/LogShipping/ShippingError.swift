import EventLog

/// An error of shipping, following or restoring, with what an operator needs
/// to act: the operation, what was wrong and what is allowed, and the
/// position when one is concerned.
///
/// ```swift
/// do { try await shipper.run() }
/// catch ShippingError.fenced { stop: another leader took over }
/// catch let error as ShippingError where error.isTransient { retry later }
/// ```
public struct ShippingError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable, CaseIterable, Codable {
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

    /// Whether `error` is a ``ShippingError`` with this code: what lets
    /// `catch ShippingError.fenced` work.
    public static func ~= (pattern: ShippingError, error: any Error) -> Bool {
        (error as? ShippingError)?.code == pattern.code
    }

    private init(pattern code: Code) {
        self.init(code, operation: "", "")
    }

    // One pattern a code, for `catch`.
    public static let invalidArgument = ShippingError(pattern: .invalidArgument)
    public static let unavailable = ShippingError(pattern: .unavailable)
    public static let diverged = ShippingError(pattern: .diverged)
    public static let fenced = ShippingError(pattern: .fenced)
    public static let missing = ShippingError(pattern: .missing)
    public static let refused = ShippingError(pattern: .refused)
}
