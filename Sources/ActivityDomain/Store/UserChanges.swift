import EventLog
import Foundation

extension UserScoped {
    /// A feed of this space's changes from `position` on: every event of the
    /// user's space (activity lifecycle, saved activities, items indexed and
    /// deleted, index batches) decoded, with its position, in log order. It
    /// reads what the log holds, then goes live, waiting for each commit
    /// (``EventLog/EventStore/subscribe(from:options:)``), without a gap or a
    /// duplicate between the two. What another device of the user needs for
    /// Handoff.
    ///
    /// ```swift
    /// let start = try await alice.read { $0.position }      // state read at this position…
    /// for try await change in alice.changes(from: start + 1) { // …then every change after it
    ///     if case .becameCurrent(let activity, let device, _) = change.change { … }
    /// }
    /// ```
    ///
    /// - It never yields another user's event: events are matched by the
    ///   user's name as UTF-8 bytes (`"jos\u{e9}"` and `"jose\u{301}"` are
    ///   two users), store-wide events (`activityTypes.declared`) are not a
    ///   user's.
    /// - It ends by throwing ``ActivityError/Code/userForgotten`` at the
    ///   user's `forgetUser` (its value is the forget's position), and
    ///   `EventLogError.storeClosed` when the store closes; it ends (nil)
    ///   when the task iterating it is cancelled.
    /// - It works on a follower too: the records a ``LogShipping`` follower
    ///   appends wake it as the leader's commits do.
    /// - On the store itself (no user) it is the default space `""`'s feed.
    public func changes(from position: Position = 1, options: SubscriptionOptions = SubscriptionOptions()) -> UserChanges {
        UserChanges(records: store.eventStore.subscribeInBatches(from: position, options: options), user: spaceName)
    }
}

/// A user's change feed: ``UserScoped/changes(from:options:)``.
public struct UserChanges: AsyncSequence, Sendable {
    public typealias Element = UserChange
    let records: LogBatchSubscription<ActivityViews>
    /// The user, whose UTF-8 bytes are what events are matched by.
    let user: String

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(records: records.makeAsyncIterator(), user: Array(user.utf8))
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var records: LogBatchSubscription<ActivityViews>.AsyncIterator
        let user: [UInt8]
        var buffer: [LogRecord] = []
        var index = 0
        /// Set once the feed threw its last error: later calls end it.
        var finished = false

        /// The next change of the user; nil once the iterating task is
        /// cancelled. Throws ``ActivityError/Code/userForgotten`` at the
        /// user's forget, and what reading the log threw (a closed store).
        public mutating func next() async throws -> UserChange? {
            guard !finished else { return nil }
            do {
                while true {
                    if index == buffer.count {
                        guard let batch = try await records.next() else { return nil }
                        buffer = batch
                        index = 0
                    }
                    let record = buffer[index]
                    index += 1
                    if let change = try Self.change(record, user: user) { return change }
                }
            } catch {
                finished = true
                throw error
            }
        }

        /// The user's change `record` holds; nil for another user's or a
        /// store-wide event; throws at the user's forget.
        static func change(_ record: LogRecord, user: [UInt8]) throws -> UserChange? {
            let event = try record.event
            if try ForgetUser.forgets(event, user: user) {
                throw ActivityError(.userForgotten, operation: "changes", field: "position", value: "\(event.position)",
                                    allowed: "a user who is not forgotten: user \"\(String(decoding: user, as: UTF8.self))\" was forgotten at "
                                        + "position \(event.position), where this feed ended (a feed from \(event.position + 1) sees what came after)")
            }
            guard try EventSpace.belongs(event, toUser: user) else { return nil }
            return try UserChange(event)
        }
    }
}
