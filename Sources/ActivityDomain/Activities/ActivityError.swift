/// A rejected activity command (SPEC §8): which operation, which field or
/// value was wrong, and what is allowed. Nothing of the command was written.
///
/// Match a code by name in `catch`, as with ``LMDB/LMDBError``:
///
/// ```swift
/// do { try store.becomeCurrent("a1") }
/// catch ActivityError.noSuchActivity { /* 404 */ }
/// catch let error as ActivityError where error.code == .activityInvalidated {
///     print(error)   // becomeCurrent: activity "a1" is invalidated; allowed: …
/// }
/// ```
///
/// The codes' raw values (`"unknownActivity"`) are stable: a service
/// switches on them and may send them to its clients. `Docs/Services.md`
/// ("Errors") maps each to an HTTP status: 404 for `unknownActivity`, 409
/// for `activityAlreadyExists`, `activityInvalidated` and
/// `mismatchedClientState`, 410 for `userForgotten`, 400 for the others.
public struct ActivityError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable, Codable {
        /// The activity type was never declared (`declareActivityTypes`).
        case undeclaredActivityType
        /// The activity type is not reverse-DNS (`com.example.app.viewOrder`).
        case malformedActivityType
        /// No activity has this id.
        case unknownActivity
        /// An activity with this id exists (invalidated ones included).
        case activityAlreadyExists
        /// The activity was invalidated: only `invalidate` is allowed on it.
        case activityInvalidated
        /// `webpageURL` is not an http or https URL.
        case invalidWebpageURL
        /// `eligibleForPublicIndexing` without `webpageURL` or `requiredUserInfoKeys`.
        case publicIndexingRequiresWebpageURLOrRequiredKeys
        /// A required userInfo key is missing when the activity is saved.
        case missingRequiredUserInfoKeys
        /// An identifier is longer than 256 UTF-8 bytes.
        case identifierTooLong
        /// An identifier is empty.
        case identifierEmpty
        /// A value of the wrong kind or out of range (a non-finite number, a URL without scheme…).
        case invalidValue
        /// An attribute name that the attribute set does not know.
        case unknownAttribute
        /// A JSON operation that is malformed (unknown `op`, wrong member types…).
        case malformedOperation
        /// A domainIdentifier that is not dot-separated non-empty components (`orders.2024`).
        case malformedDomainIdentifier
        /// A client state longer than 250 bytes.
        case clientStateTooLong
        /// `endIndexBatch`'s expectedClientState differs from the stored one: the batch was rejected.
        case mismatchedClientState
        /// `beginIndexBatch`/`endIndexBatch` that do not pair up within one `write`.
        case invalidIndexBatch
        /// A `user` that is not a valid user space name, or that contradicts
        /// the space the command acts in.
        case invalidUser
        /// A text or data value longer than ``ActivityRules/maxFieldBytes``,
        /// or a userInfo value nested deeper than ``UserInfoValue/maxDepth``.
        case fieldTooLarge
        /// The user was forgotten (`forgetUser`) while their change feed
        /// ran: the feed ends here (the error's value is the position of the
        /// forget; a feed from after it sees what came later).
        case userForgotten
    }

    public var code: Code
    /// The operation, as in SPEC §6 (`"becomeCurrent"`).
    public var operation: String
    /// The offending field, e.g. `"webpageURL"`.
    public var field: String?
    /// The offending value, as given.
    public var value: String?
    /// What would have been accepted.
    public var allowed: String?
    /// In a batch (``ActivityStore/write(_:at:options:)``), the index of the
    /// command that was rejected; the whole batch was rejected with it.
    public var commandIndex: Int?

    public init(_ code: Code, operation: String, field: String? = nil, value: String? = nil, allowed: String? = nil) {
        self.code = code
        self.operation = operation
        self.field = field
        self.value = value
        self.allowed = allowed
    }

    public var description: String {
        var text = "\(operation): \(summary)"
        if let field { text += "; field \(field)" }
        if let value { text += "; value \(quoted(value))" }
        if let allowed { text += "; allowed: \(allowed)" }
        if let commandIndex { text += " (command \(commandIndex) of the batch; nothing of the batch was written)" }
        return text
    }

    private var summary: String {
        switch code {
        case .undeclaredActivityType: "the activity type was not declared"
        case .malformedActivityType: "the activity type is not reverse-DNS"
        case .unknownActivity: "no such activity"
        case .activityAlreadyExists: "an activity with this id already exists"
        case .activityInvalidated: "the activity is invalidated"
        case .invalidWebpageURL: "webpageURL must be an http or https URL"
        case .publicIndexingRequiresWebpageURLOrRequiredKeys: "public indexing needs webpageURL or requiredUserInfoKeys"
        case .missingRequiredUserInfoKeys: "required userInfo keys are missing when the activity is saved"
        case .identifierTooLong: "the identifier is longer than 256 UTF-8 bytes"
        case .identifierEmpty: "the identifier is empty"
        case .invalidValue: "invalid value"
        case .unknownAttribute: "unknown attribute"
        case .malformedOperation: "malformed operation"
        case .malformedDomainIdentifier: "the domain identifier is malformed"
        case .clientStateTooLong: "the client state is longer than 250 bytes"
        case .mismatchedClientState: "the expected client state differs from the stored one"
        case .invalidIndexBatch: "index batch markers do not pair up"
        case .invalidUser: "the user space is invalid"
        case .fieldTooLarge: "the value is too large"
        case .userForgotten: "the user was forgotten"
        }
    }

    /// Whether `error` is an ``ActivityError`` with this code, whatever its
    /// operation and field: what lets `catch ActivityError.unknownActivity` work.
    public static func ~= (pattern: ActivityError, error: any Error) -> Bool {
        (error as? ActivityError)?.code == pattern.code
    }

    private init(pattern code: Code) {
        self.init(code, operation: "")
    }

    // One pattern a code, for `catch`.
    public static let undeclaredActivityType = ActivityError(pattern: .undeclaredActivityType)
    public static let malformedActivityType = ActivityError(pattern: .malformedActivityType)
    public static let unknownActivity = ActivityError(pattern: .unknownActivity)
    /// ``unknownActivity`` under the name of its message ("no such activity").
    public static let noSuchActivity = ActivityError(pattern: .unknownActivity)
    public static let activityAlreadyExists = ActivityError(pattern: .activityAlreadyExists)
    public static let activityInvalidated = ActivityError(pattern: .activityInvalidated)
    public static let invalidWebpageURL = ActivityError(pattern: .invalidWebpageURL)
    public static let publicIndexingRequiresWebpageURLOrRequiredKeys = ActivityError(pattern: .publicIndexingRequiresWebpageURLOrRequiredKeys)
    public static let missingRequiredUserInfoKeys = ActivityError(pattern: .missingRequiredUserInfoKeys)
    public static let identifierTooLong = ActivityError(pattern: .identifierTooLong)
    public static let identifierEmpty = ActivityError(pattern: .identifierEmpty)
    public static let invalidValue = ActivityError(pattern: .invalidValue)
    public static let unknownAttribute = ActivityError(pattern: .unknownAttribute)
    public static let malformedOperation = ActivityError(pattern: .malformedOperation)
    public static let malformedDomainIdentifier = ActivityError(pattern: .malformedDomainIdentifier)
    public static let clientStateTooLong = ActivityError(pattern: .clientStateTooLong)
    public static let mismatchedClientState = ActivityError(pattern: .mismatchedClientState)
    public static let invalidIndexBatch = ActivityError(pattern: .invalidIndexBatch)
    public static let invalidUser = ActivityError(pattern: .invalidUser)
    public static let userForgotten = ActivityError(pattern: .userForgotten)

    private func quoted(_ value: String) -> String {
        let shown = value.count > 80 ? String(value.prefix(80)) + "…" : value
        return "\"" + shown + "\""
    }
}
