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
    func forget(at time: Date, result: inout CommandResult) throws {
        let user = currentUser
        guard !user.isEmpty else {
            throw ActivityError(.invalidValue, operation: "forgetUser", field: "user", value: "\"\"",
                                allowed: "a user's name: the default space \"\" holds the app's own data and cannot be forgotten")
        }
        guard let id = try views.spaces.id(of: user, in: batch.transaction) else { return }
        let positions = try views.spaces.positions(ofSpace: id, in: batch.transaction)
        guard !positions.isEmpty else { return }
        try batch.redact(positions, context: ForgetUser.context(user: user), at: time)
        noteAppended(RedactionRecord.type)
        result.redactedEvents = positions.count
    }
}
