import EventLog
import Foundation

/// Transactions of commands handed over before the ones ahead of them are
/// durable: while transaction N commits (its views, its fsync), N+1 is
/// being handed over. (The items are tokenized by the indexer, behind the
/// log, on another core: `Docs/Architecture.md`, "The index".)
///
/// ```swift
/// let pipeline = store.pipeline()
/// for items in batches {
///     try pipeline.submit([.init(.indexSearchableItems(items), user: "alice")])   // returns at once
/// }
/// try pipeline.waitForAll()          // all durable, or the first failure thrown
/// ```
///
/// Each ``submit(_:at:options:onDurable:)`` is one ``ActivityStore/write(_:at:options:)``:
/// its commands are applied in one transaction, all or none, exactly as
/// `write` applies them, and transactions are applied in the order they
/// were submitted, so the log and the views end as if each had been
/// written after the one before (``EventLog/WritePipeline`` gives the
/// ordering, durability and failure rules). A transaction without a time
/// takes the clock when it is submitted.
///
/// **After a failure, nothing more is applied.** When a transaction is
/// rejected (an ``ActivityError`` naming the command) or fails to commit, the
/// transactions submitted after it fail with
/// ``EventLog/EventLogError/Code/pipelineHalted`` and are not applied, and so
/// does every later `submit`: a caller who built N+1 on N's outcome never
/// sees N+1 applied without N. Those before it stay committed. To go on,
/// open a new pipeline.
public final class CommandPipeline: Sendable {
    public let store: ActivityStore
    let writes: WritePipeline<ActivityViews>

    init(store: ActivityStore, depth: Int) {
        self.store = store
        writes = store.eventStore.pipeline(depth: depth)
    }

    /// The most transactions in flight (submitted and not yet durable).
    public var depth: Int { writes.depth }

    /// Hands over one transaction of commands and returns its ticket at once
    /// (waiting only while ``depth`` transactions are in flight).
    ///
    /// - Parameters:
    ///   - onDurable: called once the transaction committed (with each
    ///     command's result) or failed, in submission order, on the
    ///     pipeline's committing thread; it must not wait for a later
    ///     transaction of the pipeline.
    /// - Throws: what `write` throws before writing (`forgetUser` among
    ///   other commands), and ``EventLog/EventLogError/Code/pipelineHalted``
    ///   after a failure.
    @discardableResult
    public func submit(_ commands: [ActivityCommand.Timed], at time: Date? = nil,
                       options writeOptions: WriteOptions = WriteOptions(),
                       onDurable: (@Sendable (Result<[CommandResult], any Error>) -> Void)? = nil)
        throws -> PipelinedWrite<[CommandResult]> {
        try ActivityStore.checkTransaction(commands)
        let views = store.views
        return try writes.submit(ActivityStore.options(writeOptions, at: time), completing: { receipt in
            if receipt.value != nil { receipt.value = ActivityStore.results(of: receipt) }
        }, onDurable: { outcome in
            onDurable?(outcome.map { $0.value ?? [] })
        }) { batch in
            try ActivityCommandExecutor.execute(commands, views: views, in: batch)
        }
    }

    /// Waits until every transaction submitted so far is complete; throws
    /// the pipeline's first failure, if any.
    public func waitForAll() throws {
        try writes.waitForAll()
    }

    /// The first failure of the pipeline, or nil while every transaction succeeded.
    public var firstFailure: (any Error)? { writes.firstFailure }
}

extension ActivityStore {
    /// A pipeline of transactions of commands into this store: see ``CommandPipeline``.
    ///
    /// ```swift
    /// let pipeline = store.pipeline(depth: 2)
    /// let ticket = try pipeline.submit([.init(.indexSearchableItems(items))])
    /// let results = try ticket.wait().value   // [CommandResult], once durable
    /// ```
    public func pipeline(depth: Int = 2) -> CommandPipeline {
        CommandPipeline(store: self, depth: depth)
    }
}
