import Foundation
import LMDB

/// A store's writes, written by one thread of its own in groups: writes that
/// wait while a transaction is being written all go into the next one (up to
/// ``maxGroup``), so they share its commit and its fsync. The thread hands
/// each group to the store's ``LogWriter``, which writes it in one
/// transaction, and then tells each caller its outcome.
///
/// A caller does not lend its thread to the writing. A synchronous caller
/// blocks until its write is done; an async caller is suspended on a
/// continuation, holding no thread at all; a pipeline is called back. So
/// however many tasks write at once, all of them can be waiting in the
/// queue, and one commit carries as many as ``maxGroup``.
///
/// ```swift
/// let receipt = try groupCommit.handOver(request)          // blocks this thread
/// let receipt = try await groupCommit.handOver(request)    // suspends this task
/// ```
///
/// `@unchecked Sendable`: the queue and the statistics are accessed under
/// `condition` only; a request is written by the writer thread alone until
/// its caller is woken.
final class GroupCommit: @unchecked Sendable {
    /// The most writes in one transaction.
    let maxGroup: Int
    private let condition = NSCondition()
    private var waiting: [any QueuedWrite] = []
    private var statistics = GroupCommitStatistics()
    /// Writes each group in one transaction; set by ``start(_:)``.
    private var writer: LogWriter?
    private var thread: JoinableThread?
    /// The writer thread, once it runs: a write submitted there traps.
    private var writerThread: pthread_t?
    private var stopping = false

    init(maxGroup: Int) {
        self.maxGroup = max(1, maxGroup)
    }

    /// Starts the writer thread, which hands each group to `writer`. The
    /// thread lives until ``stop()``, which the owner calls when it goes.
    func start(_ writer: LogWriter) throws {
        condition.lock()
        self.writer = writer
        condition.unlock()
        // The projections' work runs on this thread: a main thread's stack.
        let thread = try JoinableThread(name: "eventlog.writer", stackSize: 8 << 20) { [self] in run() }
        condition.lock()
        self.thread = thread
        condition.unlock()
    }

    /// Lets the writer thread end once the queue is empty, and waits for it
    /// to end (so that it holds the writer's environment no longer), unless
    /// called on that thread.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        let onWriter = writerThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        let thread = self.thread
        condition.unlock()
        if !onWriter { thread?.join() }
    }

    /// How many transactions the writer wrote, how many writes they
    /// carried, and how many wait now.
    var counts: GroupCommitStatistics {
        condition.lock()
        defer { condition.unlock() }
        var counts = statistics
        counts.waiting = waiting.count
        return counts
    }

    // MARK: Submitting

    /// Writes `request` and returns its outcome, blocking this thread until then.
    func handOver<Value>(_ request: WriteRequest<Value>) throws -> WriteReceipt<Value> {
        let done = Completion<WriteReceipt<Value>>()
        request.notify = .completion(done)
        enqueue(request)
        return try done.wait()
    }

    /// Writes `request` and returns its outcome; the task is suspended
    /// meanwhile, holding no thread.
    func handOver<Value: Sendable>(_ request: WriteRequest<Value>) async throws -> WriteReceipt<Value> {
        try await withCheckedThrowingContinuation { continuation in
            request.notify = .continuation(continuation)
            enqueue(request)
        }
    }

    /// Queues `request`; its `notify` hears the outcome on the writer
    /// thread, requests in the order they were submitted.
    func enqueue(_ request: any QueuedWrite) {
        condition.lock()
        defer { condition.unlock() }
        if let writerThread, pthread_equal(writerThread, pthread_self()) != 0 {
            fatalError("EventStore.write was called inside a write closure on the same thread (the store's writer thread): "
                + "writes are not reentrant (the inner write would wait for the outer one forever). "
                + "Append through the LogBatch the closure was given.")
        }
        precondition(writer != nil, "a write was submitted to a store opened read-only")
        waiting.append(request)
        if waiting.count == 1 { condition.broadcast() }
    }

    // MARK: The writer thread

    private func run() {
        condition.lock()
        writerThread = pthread_self()
        while true {
            while waiting.isEmpty && !stopping { condition.wait() }
            if waiting.isEmpty { break }
            let group = Array(waiting.prefix(maxGroup))
            waiting.removeFirst(group.count)
            statistics.count(group.count)
            let writer = self.writer
            condition.unlock()
            writer?.commit(group)
            for request in group { request.complete() }
            condition.lock()
        }
        writerThread = nil
        writer = nil
        condition.unlock()
    }
}

/// What the group commit has written since the store opened: how many
/// transactions, and how many writes they carried; and how many writes wait
/// now. Writes that waited together share a transaction, so
/// `writes / transactions` is how many shared each commit.
///
/// ```swift
/// let counts = store.groupCommitStatistics
/// print(counts.writesPerTransaction)     // 31.0 with 64 tasks writing at once
/// ```
public struct GroupCommitStatistics: Sendable, Equatable {
    /// Transactions the writer wrote (one a group, committed or failed).
    public var transactions = 0
    /// Writes those transactions carried.
    public var writes = 0
    /// The most writes one transaction carried.
    public var largestGroup = 0
    /// Writes queued when the statistics were read, not yet taken by the writer.
    public var waiting = 0

    public init() {}

    /// Writes per transaction, on average; 0 before the first.
    public var writesPerTransaction: Double {
        transactions == 0 ? 0 : Double(writes) / Double(transactions)
    }

    mutating func count(_ groupSize: Int) {
        transactions += 1
        writes += groupSize
        largestGroup = max(largestGroup, groupSize)
    }
}

/// A write waiting in a ``GroupCommit``, as the ``LogWriter`` sees it: the
/// options and time it runs with, the closure it runs, and where the writer
/// records what it wrote or why it failed.
protocol QueuedWrite: AnyObject, Sendable {
    var options: WriteOptions { get }
    /// The write's time, decided when the request was made.
    var time: Date { get }
    /// Why this write must not run: the write before it in its pipeline failed.
    var haltedBy: (any Error)? { get }
    /// What the last run wrote; set by the writer.
    var written: Written? { get set }
    /// Why the write failed, or was not run; set by the writer.
    var failure: (any Error)? { get set }
    /// Runs the caller's closure in `batch`, keeping what it returns. Runs
    /// again, from the start, when the map grows.
    func perform(_ batch: LogBatch) throws
    /// Tells the caller the outcome; the write's closure is let go first.
    func complete()
}

extension QueuedWrite {
    /// Whether a run in the group's transaction failed (and so wrote nothing).
    var hasFailed: Bool { failure != nil }
}
