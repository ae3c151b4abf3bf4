/// An error of the event-log engine, carrying what a user needs to act on it:
/// the operation, what was wrong, and where in the log when it applies.
///
/// Match a code by name in `catch`, as with ``LMDB/LMDBError``:
///
/// ```swift
/// do { try store.append(events, WriteOptions(expectedHead: 41)) }
/// catch EventLogError.headMismatch { /* reload and retry */ }
/// catch let error as EventLogError where error.code == .corrupt { print(error.position ?? 0, error.key ?? "") }
/// ```
///
/// The codes' raw values are stable: a service may switch on them or send
/// them to its clients (`Docs/Services.md`, "Errors").
public struct EventLogError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable, CaseIterable, Codable {
        /// An append stated a head position and another writer got there first.
        case headMismatch
        /// An event or option is not acceptable (e.g. an over-long type).
        case invalidArgument
        /// The store directory holds no store (or another program's LMDB environment).
        case storeMissing
        /// This user may not read (or write) the store's directory or files.
        case permissionDenied
        /// The store was written by a format this version does not read.
        case incompatibleFormat
        /// The log fails verification.
        case corrupt
        /// A snapshot cannot be used.
        case snapshot
        /// A record from elsewhere (a follower's stream) does not continue
        /// this log: another position, or a link that does not follow.
        case diverged
        /// A read of a store opened read-only found views that lag the log
        /// or were built by another projection version (``ViewStatus``);
        /// `replay` (``EventStore/rebuild(full:progress:)``) rebuilds them.
        case viewsStale
        /// The store is in use where the operation needs it alone: a
        /// compaction while another process has it open, or an open while
        /// a compaction runs.
        case storeBusy
        /// A write handed to a ``WritePipeline`` was not applied because a
        /// write submitted before it failed: a pipeline applies nothing after
        /// a failure (the message names the failed write and its error).
        case pipelineHalted
        /// A read named a position (`after:`) that the index did not reach
        /// within the time it was given; the message says how far behind
        /// the index is.
        case indexBehind
        /// The store was closed (``EventStore/close()``): open it again to use it.
        case storeClosed
        /// A wait for a position (``EventStore/waitForPosition(_:timeout:)``)
        /// ran out of time; the message says how far the store got.
        case timedOut
    }

    public var code: Code
    /// The operation that failed, e.g. `"append"`.
    public var operation: String
    /// What was wrong and what is allowed.
    public var message: String
    /// The log position concerned, if any.
    public var position: Position?
    /// The key of the engine's record concerned, if any (`meta`'s
    /// `checkpoint:search`, an idempotency key).
    public var key: String?

    public init(_ code: Code, operation: String, _ message: String, position: Position? = nil, key: String? = nil) {
        self.code = code
        self.operation = operation
        self.message = message
        self.position = position
        self.key = key
    }

    /// A record of the engine's own (`meta`, `idempotency`) that does not
    /// decode: the store is corrupt, and the error names the key.
    public static func corrupt(key: String, database: String, operation: String, _ problem: String) -> EventLogError {
        EventLogError(.corrupt, operation: operation, "the \(database) record \"\(key)\" is damaged: \(problem)", key: key)
    }

    public var description: String {
        if let position { return "\(operation): \(message) (position \(position))" }
        return "\(operation): \(message)"
    }

    /// Whether `error` is an ``EventLogError`` with this code, whatever its
    /// operation and message: what lets `catch EventLogError.storeClosed` work.
    public static func ~= (pattern: EventLogError, error: any Error) -> Bool {
        (error as? EventLogError)?.code == pattern.code
    }

    // One pattern a code, for `catch`.
    public static let headMismatch = EventLogError(pattern: .headMismatch)
    public static let invalidArgument = EventLogError(pattern: .invalidArgument)
    public static let storeMissing = EventLogError(pattern: .storeMissing)
    public static let incompatibleFormat = EventLogError(pattern: .incompatibleFormat)
    public static let corrupt = EventLogError(pattern: .corrupt)
    public static let snapshot = EventLogError(pattern: .snapshot)
    public static let diverged = EventLogError(pattern: .diverged)
    public static let viewsStale = EventLogError(pattern: .viewsStale)
    public static let storeBusy = EventLogError(pattern: .storeBusy)
    public static let pipelineHalted = EventLogError(pattern: .pipelineHalted)
    public static let storeClosed = EventLogError(pattern: .storeClosed)
    public static let timedOut = EventLogError(pattern: .timedOut)

    private init(pattern code: Code) {
        self.init(code, operation: "", "")
    }
}
