import EventLog
import Foundation
import LMDB

/// The commands of one user space inside one write
/// (``UserScoped/write(at:_:)-(_,((SpaceWriter)throws->R))``): each runs at
/// once in the write's transaction and sees the effects of those before it;
/// all of them commit together, or none does. Every command of
/// ``SpaceCommands``, with Apple's names.
///
/// ```swift
/// try alice.write { space in
///     try space.createActivity(activity)
///     try space.becomeCurrent(activity.activity)
/// }
/// ```
///
/// A writer lives as long as its closure: it must not escape it. A command
/// that throws has written nothing, so the closure may catch its
/// ``ActivityError`` and go on; any other error (the engine's, such as a
/// full map, after which the whole write runs again) must leave the closure.
public struct SpaceWriter: SpaceCommands {
    let executor: ActivityCommandExecutor
    /// The space the commands act in (nil: the default space, and every
    /// space for `purgeExpired`).
    let user: String?

    /// Runs `body` with a writer of `user`'s space in `batch`: the body of
    /// every closure write of a space.
    static func perform<R>(_ body: (SpaceWriter) throws -> R, user: String?, views: ActivityViews, in batch: LogBatch) throws -> R {
        let executor = ActivityCommandExecutor(views: views, batch: batch)
        let value = try body(SpaceWriter(executor: executor, user: user))
        // An index batch begun and not ended rejects the whole write.
        try executor.finish()
        return value
    }

    /// Executes `command` at once in the write's transaction; `at`, when
    /// given, is the time its events record (else the write's).
    public func execute(_ command: ActivityCommand, at time: Date?) throws -> CommandResult {
        try executor.execute(command, user: user, at: time)
    }
}
