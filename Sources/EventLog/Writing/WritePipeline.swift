import Dispatch
import Foundation
import LMDB

/// Writes handed over before the ones ahead of them are durable: a caller
/// submits write N+1 (and prepares N+2) while write N commits, instead of
/// waiting for each fsync in turn.
///
/// ```swift
/// let pipeline = store.pipeline(depth: 4)
/// for events in batches {
///     let ticket = try pipeline.submit { batch in for e in events { try batch.append(e) } }
///     tickets.append(ticket)                 // returns at once, unless 4 writes are in flight
/// }
/// try pipeline.waitForAll()                  // every write durable, or the first failure thrown
/// let positions = try tickets[0].wait().positions
/// ```
///
/// What a pipeline promises:
/// - **Order.** Writes are applied in the order they were submitted, each
///   in the store's write path exactly as ``EventStore/write(_:_:)`` would
///   apply it: the log and the views end as if the writes had been made one
///   after another. Writes that are waiting when the committer comes round
///   share one transaction and one fsync (group commit), each in a nested
///   transaction of its own.
/// - **Durability in order.** A write's ticket completes (and its
///   `onDurable` runs) once its transaction committed, and the tickets of a
///   pipeline complete in submission order.
/// - **Nothing after a failure.** When a write fails (its closure throws,
///   the commit fails), no write submitted after it is applied: each fails
///   with ``EventLogError/Code/pipelineHalted``, naming the failed write and
///   its error, and so does every later ``submit(_:_:onDurable:)``. The
///   writes before it stay committed. A caller who wants to go on opens a new
///   pipeline after deciding what to do with the failed write.
/// - **Backpressure.** At most `depth` writes are in flight (submitted and
///   not yet durable); `submit` waits for room beyond that.
///
/// A write's closure runs on the store's writer thread, so it must not
/// rely on the submitting thread; like any write closure it may run more
/// than once (when the map grows) and must act only through its batch. Work
/// that does not need the transaction (encoding, tokenizing) belongs before
/// `submit`, or on another thread while earlier writes commit: that is what
/// a pipeline makes room for.
///
/// Writes go straight into the store's group commit, in submission order,
/// each following the one before (so that it does not run when that one
/// failed); their acknowledgments run on a serial queue of the pipeline, in
/// the order the writer finished them, which is submission order.
///
/// `@unchecked Sendable`: the mutable state is read and written only while
/// `condition` is held.
public final class WritePipeline<Views: ProjectionSet>: @unchecked Sendable {
    public let store: EventStore<Views>
    /// The most writes in flight (submitted and not yet durable) at once.
    public let depth: Int

    private let condition = NSCondition()
    /// Runs the acknowledgments, one after another, off the writer thread.
    private let acknowledgments = DispatchQueue(label: "eventlog.pipeline.acknowledge", qos: .userInitiated)
    /// Submitted and not yet acknowledged.
    private var inFlight = 0
    private var submitted: UInt64 = 0
    /// The last request submitted: the next one follows it.
    private var last: (any PipelineStep)?
    /// The first failure; nothing submitted after it is applied.
    private var failure: (any Error)?

    init(store: EventStore<Views>, depth: Int) {
        self.store = store
        self.depth = max(1, depth)
    }

    /// Hands over a write and returns its ticket, without waiting for it to
    /// commit (but waiting for room while ``depth`` writes are in flight).
    ///
    /// - Parameters:
    ///   - options: as for ``EventStore/write(_:_:)``: an idempotency key, an
    ///     expected head, a time (without one, the store's clock now).
    ///   - onDurable: called once the write committed or failed, before its
    ///     ticket completes; calls come in submission order, on the
    ///     pipeline's acknowledging queue. It must not wait for this write or
    ///     a later one of this pipeline (their tickets complete after it returns).
    ///   - body: runs in the write path on the store's writer thread, as
    ///     ``EventStore/write(_:_:)``'s closure does.
    /// - Throws: ``EventLogError/Code/pipelineHalted`` once a write failed,
    ///   the same validation errors as ``EventStore/write(_:_:)``.
    @discardableResult
    public func submit<R: Sendable>(_ options: WriteOptions = WriteOptions(),
                                    onDurable: (@Sendable (Result<WriteReceipt<R>, any Error>) -> Void)? = nil,
                                    _ body: @escaping @Sendable (LogBatch) throws -> R)
        throws -> PipelinedWrite<R> {
        try submit(options, completing: nil, onDurable: onDurable, body)
    }

    /// ``submit(_:onDurable:_:)``, with `completing` called on a committed
    /// write's receipt before anyone sees it (a layer above fills in what the
    /// commit decided, as ``EventStore/write(_:_:)``'s callers do).
    package func submit<R: Sendable>(_ options: WriteOptions, completing: (@Sendable (inout WriteReceipt<R>) -> Void)?,
                                     onDurable: (@Sendable (Result<WriteReceipt<R>, any Error>) -> Void)?,
                                     _ body: @escaping @Sendable (LogBatch) throws -> R) throws -> PipelinedWrite<R> {
        try store.checkWritable(options)
        condition.lock()
        defer { condition.unlock() }
        while inFlight >= depth && failure == nil { condition.wait() }
        if let failure { throw halted(by: failure) }
        // Counted in until its ticket completes: closing the store waits for it.
        try store.writes.enter()
        submitted += 1
        let ticket = PipelinedWrite<R>(sequence: submitted)
        let request = WriteRequest(options, clock: store.options.clock, after: last, sequence: submitted, body)
        request.notify = .callback { [self] outcome in
            acknowledgments.async { self.acknowledge(ticket, outcome, completing: completing, onDurable: onDurable) }
        }
        last = request
        inFlight += 1
        store.groupCommit.enqueue(request)
        return ticket
    }

    /// Waits until every write submitted so far is complete; throws the
    /// first failure of the pipeline, if any.
    public func waitForAll() throws {
        condition.lock()
        defer { condition.unlock() }
        while inFlight > 0 { condition.wait() }
        if let failure { throw failure }
    }

    /// The first failure of the pipeline, or nil while every write succeeded.
    public var firstFailure: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return failure
    }

    /// One write's outcome, in submission order: the failure is recorded
    /// before its ticket completes, so whoever sees a failed ticket finds
    /// the pipeline halted.
    private func acknowledge<R>(_ ticket: PipelinedWrite<R>, _ outcome: Result<WriteReceipt<R>, any Error>,
                                completing: (@Sendable (inout WriteReceipt<R>) -> Void)?,
                                onDurable: (@Sendable (Result<WriteReceipt<R>, any Error>) -> Void)?) {
        var outcome = outcome
        switch outcome {
        case .success(let committed):
            var receipt = store.afterCommit(committed)
            completing?(&receipt)
            outcome = .success(receipt)
        case .failure(let error):
            condition.lock()
            if failure == nil { failure = error }
            condition.unlock()
        }
        onDurable?(outcome)
        ticket.complete(outcome)
        store.writes.leave()
        condition.lock()
        inFlight -= 1
        condition.broadcast()
        condition.unlock()
    }

    private func halted(by failure: any Error) -> EventLogError {
        if let error = failure as? EventLogError, error.code == .pipelineHalted { return error }
        return EventLogError(.pipelineHalted, operation: "append",
                             "the pipeline applies nothing after a failed write, and a write failed: \(failure); open a new pipeline to go on")
    }
}

/// A write handed to a ``WritePipeline``: wait for it, or ask whether it is done.
///
/// ```swift
/// let ticket = try pipeline.submit { batch in try batch.append(event) }
/// let receipt = try ticket.wait()           // durable once this returns
/// let same = try await ticket.receipt       // or suspend the task instead
/// ```
public final class PipelinedWrite<R: Sendable>: Sendable {
    /// The write's place in its pipeline: 1 for the first submitted.
    public let sequence: UInt64
    private let done = Completion<WriteReceipt<R>>()

    init(sequence: UInt64) { self.sequence = sequence }

    /// Waits until the write committed (and returns its receipt) or failed (and throws why).
    public func wait() throws -> WriteReceipt<R> {
        try done.wait()
    }

    /// ``wait()``, suspending the task instead of blocking a thread.
    public var receipt: WriteReceipt<R> {
        get async throws { try await done.value }
    }

    /// True once the write committed or failed.
    public var isDone: Bool { done.isDone }

    func complete(_ outcome: Result<WriteReceipt<R>, any Error>) {
        done.complete(outcome)
    }
}
