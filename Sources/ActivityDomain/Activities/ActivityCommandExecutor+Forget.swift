import EventLog
import Foundation
import LMDB

extension ActivityCommandExecutor {
    /// `forgetUser`: the positions of every event of the user's space (from
    /// `spaces.events`, one cursor range: the cost follows the user, not the
    /// log), redacted by one redaction record whose context names the user.
    /// Every projection drops the space when it applies that record. A user
    /// with no space (never seen, or already forgotten with nothing since)
    /// changes nothing.
    func forget(_ scope: inout CommandScope) throws {
        let user = scope.user
        guard !user.isEmpty else {
            throw ActivityError(.invalidValue, operation: "forgetUser", field: "user", value: "\"\"",
                                allowed: "a user's name: the default space \"\" holds the app's own data and cannot be forgotten")
        }
        guard scope.space != SpaceDirectory.none else { return }
        let positions = try views.spaces.positions(ofSpace: scope.space, in: txn)
        guard !positions.isEmpty else { return }
        try batch.redact(positions, context: ForgetUser.context(user: user), at: scope.time)
        scope.result.eventTypes.append(RedactionRecord.type)
        scope.result.redactedEvents = positions.count
    }
}
