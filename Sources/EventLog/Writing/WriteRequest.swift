import Foundation
import LMDB

/// One write in the ``GroupCommit`` queue, as data: the caller's closure
/// with its options and its time, what the writer wrote for it, and whom to
/// tell. The writer thread (``LogWriter``) runs the closure and records the
/// outcome here; ``complete()`` hands it to the caller, who reads nothing else.
///
/// The time is decided here, once, when the request is made: the options'
/// time, else the store's clock read now (``StoreOptions/clock``). A run
/// again after the map grew records the same time.
///
/// `@unchecked Sendable`: created by the caller, then touched by the writer
/// thread alone until ``complete()`` hands the outcome back.
final class WriteRequest<Value>: QueuedWrite, @unchecked Sendable {
    /// How the caller hears the outcome.
    enum Notify {
        /// A thread blocked in ``Completion/wait()``.
        case completion(Completion<WriteReceipt<Value>>)
        /// A suspended task.
        case continuation(CheckedContinuation<WriteReceipt<Value>, any Error>)
        /// A pipeline, called on the writer thread in submission order.
        case callback((Result<WriteReceipt<Value>, any Error>) -> Void)
    }

    let options: WriteOptions
    /// The write's time (``LogBatch/time``).
    let time: Date
    private var body: ((LogBatch) throws -> Value)?
    /// Set by whoever submits the request, before it is queued.
    var notify: Notify?
    /// What the closure returned in its last run.
    private var value: Value?
    var written: Written?
    var failure: (any Error)?
    /// The write this one follows in a ``WritePipeline``: when it failed,
    /// this one is not run. Let go once this one is complete, so that a
    /// pipeline does not keep every request it was ever given.
    private var predecessor: (any PipelineStep)?
    /// The write's place in its pipeline (1 for the first), for messages.
    let sequence: UInt64

    init(_ options: WriteOptions, clock: () -> Date, after predecessor: (any PipelineStep)? = nil, sequence: UInt64 = 0,
         _ body: @escaping (LogBatch) throws -> Value) {
        self.options = options
        time = options.time ?? clock()
        self.body = body
        self.predecessor = predecessor
        self.sequence = sequence
    }

    var haltedBy: (any Error)? {
        guard let predecessor, let failure = predecessor.failure else { return nil }
        if let halted = failure as? EventLogError, halted.code == .pipelineHalted { return halted }
        return EventLogError(.pipelineHalted, operation: "append",
                             "pipelined write \(sequence) was not applied: write \(predecessor.sequence) before it failed (\(failure)); "
                                 + "a pipeline applies nothing after a failed write")
    }

    func perform(_ batch: LogBatch) throws {
        guard let body else { preconditionFailure("a write request ran after it completed") }
        value = try body(batch)
    }

    func complete() {
        body = nil
        predecessor = nil
        let outcome: Result<WriteReceipt<Value>, any Error>
        if let failure {
            outcome = .failure(failure)
        } else if let written {
            outcome = .success(WriteReceipt(value: written.isRetry ? nil : value, written))
        } else {
            outcome = .failure(EventLogError(.invalidArgument, operation: "append", "the write was not run: its store was closed"))
        }
        switch notify {
        case .completion(let done): done.complete(outcome)
        case .continuation(let continuation): continuation.resume(with: outcome)
        case .callback(let call): call(outcome)
        case nil: break
        }
        notify = nil
    }
}

/// What the writer wrote for one request: a ``WriteReceipt`` but for the
/// closure's value.
struct Written: Sendable {
    var positions: ClosedRange<Position>?
    var isRetry: Bool
    var redactedFrom: Position? = nil
    var appendedBytes = 0
    var removedSnapshots: [Position] = []
}

extension WriteReceipt {
    init(value: Value?, _ written: Written) {
        self.init(value: value, positions: written.positions, isRetry: written.isRetry)
        redactedFrom = written.redactedFrom
        appendedBytes = written.appendedBytes
        removedSnapshots = written.removedSnapshots
    }
}

/// A request as the one after it in a pipeline sees it.
protocol PipelineStep: AnyObject {
    var sequence: UInt64 { get }
    /// Why it failed, once it did.
    var failure: (any Error)? { get }
}

extension WriteRequest: PipelineStep {}

/// An outcome handed from one thread to the threads and tasks that wait
/// for it: set once, then read by any number of them.
///
/// ```swift
/// let done = Completion<Int>()
/// Thread { done.complete(.success(42)) }.start()
/// let n = try done.wait()                 // blocks; `await done.value` suspends instead
/// ```
///
/// `@unchecked Sendable`: `outcome` and `waiters` change under `condition` only.
final class Completion<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var outcome: Result<Value, any Error>?
    /// Tasks suspended in ``value``, resumed by ``complete(_:)``.
    private var waiters: [(Result<Value, any Error>) -> Void] = []

    /// Blocks until the outcome is set; returns its value or throws its error.
    func wait() throws -> Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let outcome { return try outcome.get() }
            condition.wait()
        }
    }

    var isDone: Bool {
        condition.lock()
        defer { condition.unlock() }
        return outcome != nil
    }

    func complete(_ outcome: Result<Value, any Error>) {
        condition.lock()
        self.outcome = outcome
        let waiting = waiters
        waiters = []
        condition.broadcast()
        condition.unlock()
        for resume in waiting { resume(outcome) }
    }
}

extension Completion where Value: Sendable {
    /// The outcome, waited for by suspending the task (no thread is held).
    var value: Value {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                condition.lock()
                guard let outcome else {
                    waiters.append { continuation.resume(with: $0) }
                    condition.unlock()
                    return
                }
                condition.unlock()
                continuation.resume(with: outcome)
            }
        }
    }
}
