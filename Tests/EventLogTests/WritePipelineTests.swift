import EventLog
import Foundation
import LMDB
import Testing

/// A value several threads append to, in the order they append.
final class Recorder<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []
    func append(_ item: T) { lock.withLock { items.append(item) } }
    var all: [T] { lock.withLock { items } }
}

/// A gate a write closure waits at until the test opens it: it holds the
/// committer so that the writes submitted meanwhile are all queued.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = false
    func wait() {
        condition.lock()
        while !open { condition.wait() }
        condition.unlock()
    }
    func release() {
        condition.lock()
        open = true
        condition.broadcast()
        condition.unlock()
    }
}

struct Refused: Error, Equatable {
    var n: Int
}

@Suite("Write pipeline: order, durability acknowledgments, nothing after a failure")
struct WritePipelineTests {
    @Test("writes are applied in submission order, each as its own write, and the log and views equal sequential writes")
    func orderAndEquivalence() throws {
        let dirs = [TemporaryDirectory(), TemporaryDirectory()]
        defer { for dir in dirs { dir.remove() } }
        let piped = try EventStore<TwoViews>(path: dirs[0].path, options: fastOptions())
        let plain = try EventStore<TwoViews>(path: dirs[1].path, options: fastOptions())
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        let batches = (0..<120).map { n in (0..<(n % 4 + 1)).map { event("t\(n % 3)", n * 10 + $0, size: 40 + n, at: time) } }

        let pipeline = piped.pipeline(depth: 8)
        let acknowledged = Recorder<(sequence: UInt64, positions: ClosedRange<Position>)>()
        var tickets: [PipelinedWrite<Int>] = []
        for (n, events) in batches.enumerated() {
            tickets.append(try pipeline.submit(onDurable: { result in
                if case .success(let receipt) = result { acknowledged.append((UInt64(n + 1), receipt.positions!)) }
            }) { batch in
                for e in events { try batch.append(e) }
                return n
            })
        }
        try pipeline.waitForAll()
        for events in batches { try plain.append(events) }

        var next: Position = 1
        for (n, ticket) in tickets.enumerated() {
            #expect(ticket.sequence == UInt64(n + 1))
            let receipt = try ticket.wait()
            #expect(receipt.value == n)
            #expect(receipt.positions == next...(next + UInt64(batches[n].count) - 1))
            next += UInt64(batches[n].count)
        }
        // Acknowledged once each, in submission order, with increasing positions.
        #expect(acknowledged.all.map(\.sequence) == (1...UInt64(batches.count)).map { $0 })
        #expect(acknowledged.all.map(\.positions.lowerBound) == acknowledged.all.map(\.positions.lowerBound).sorted())
        #expect(try piped.events() == plain.events())
        #expect(try piped.read { try piped.views.counts.total(in: $0) } == plain.read { try plain.views.counts.total(in: $0) })
        #expect(try piped.read { try piped.views.bytes.total(in: $0) } == plain.read { try plain.views.bytes.total(in: $0) })
        #expect(try piped.verify().isValid)
        #expect(try piped.verifyViews(full: true).isEqual)
    }

    @Test("a write is visible in the store when its acknowledgment runs")
    func acknowledgedMeansCommitted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = StoreOptions()
        options.durability = .durable
        let store = try EventStore<CountingViews>(path: dir.path, options: options)
        let pipeline = store.pipeline(depth: 4)
        let seen = Recorder<Bool>()
        for n in 0..<40 {
            try pipeline.submit(onDurable: { result in
                guard case .success(let receipt) = result, let last = receipt.positions?.upperBound else { return seen.append(false) }
                // A new read transaction sees the write: it committed.
                seen.append((try? store.head()).map { $0 >= last } ?? false)
            }) { batch in try batch.append(event("t", n)) }
        }
        try pipeline.waitForAll()
        #expect(seen.all.count == 40)
        #expect(seen.all.allSatisfy { $0 })
        #expect(try store.head() == 40)
    }

    @Test("after a failed write, the writes queued behind it in the same transaction are not applied")
    func failureHaltsTheRestOfItsGroup() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        let pipeline = store.pipeline(depth: 16)
        let gate = Gate()
        let outcomes = Recorder<(UInt64, Bool)>()
        var tickets: [PipelinedWrite<Void>] = []
        // Write 1 holds the committer until 2…6 are queued: they then share the next transaction.
        for n in 1...6 {
            tickets.append(try pipeline.submit(onDurable: { result in
                if case .success = result { outcomes.append((UInt64(n), true)) } else { outcomes.append((UInt64(n), false)) }
            }) { batch in
                if n == 1 { gate.wait() }
                if n == 3 { throw Refused(n: 3) }
                try batch.append(event("t", n))
            })
        }
        gate.release()
        #expect(throws: Refused(n: 3)) { try pipeline.waitForAll() }
        try expectHalted(tickets, failedAt: 3, store: store, applied: 2)
        #expect(outcomes.all.map(\.0) == [1, 2, 3, 4, 5, 6])
        #expect(outcomes.all.map(\.1) == [true, true, false, false, false, false])
        try expectClosedAfterFailure(pipeline, store: store)
    }

    @Test("after a failed write, the writes submitted while it ran are not applied")
    func failureHaltsLaterGroups() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        let pipeline = store.pipeline(depth: 16)
        let gate = Gate()
        var tickets: [PipelinedWrite<Void>] = []
        for n in 1...3 {
            tickets.append(try pipeline.submit { batch in
                if n == 3 {
                    gate.wait()
                    throw Refused(n: 3)
                }
                try batch.append(event("t", n))
            })
        }
        // 4…6 wait while 3 runs; the committer takes them after it failed.
        for n in 4...6 {
            tickets.append(try pipeline.submit { batch in try batch.append(event("t", n)) })
        }
        gate.release()
        #expect(throws: Refused(n: 3)) { try pipeline.waitForAll() }
        try expectHalted(tickets, failedAt: 3, store: store, applied: 2)
        try expectClosedAfterFailure(pipeline, store: store)
    }

    @Test("a write that fails to append (a bad event) halts the pipeline, and a new pipeline goes on")
    func appendErrorHalts() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        let pipeline = store.pipeline(depth: 2)
        let good = try pipeline.submit { batch in try batch.append(event("t", 1)) }
        let bad = try pipeline.submit { batch in try batch.append(NewEvent(type: "", schemaVersion: 1, payload: [])) }
        _ = try good.wait()
        #expect { try bad.wait() } throws: { ($0 as? EventLogError)?.code == .invalidArgument }
        #expect { try pipeline.submit { batch in try batch.append(event("t", 2)) } } throws: {
            ($0 as? EventLogError)?.code == .pipelineHalted
        }
        let again = store.pipeline()
        #expect(try again.submit { batch in try batch.append(event("t", 3)) }.wait().positions == 2...2)
        #expect(try store.head() == 2)
    }

    @Test("submit waits while depth writes are in flight")
    func backpressure() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        let pipeline = store.pipeline(depth: 2)
        let gate = Gate()
        try pipeline.submit { batch in
            gate.wait()
            try batch.append(event("t", 1))
        }
        try pipeline.submit { batch in try batch.append(event("t", 2)) }
        let third = Recorder<Bool>()
        let thread = Thread {
            _ = try? pipeline.submit { batch in try batch.append(event("t", 3)) }
            third.append(true)
        }
        thread.start()
        // However long this waits, the third submit cannot return while the first holds the committer.
        Thread.sleep(forTimeInterval: 0.2)
        #expect(third.all.isEmpty)
        gate.release()
        while third.all.isEmpty { Thread.sleep(forTimeInterval: 0.01) }
        try pipeline.waitForAll()
        #expect(try store.head() == 3)
    }

    @Test("idempotency keys and expected heads work through a pipeline")
    func writeOptions() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        let pipeline = store.pipeline(depth: 4)
        let first = try pipeline.submit(WriteOptions(idempotencyKey: "k")) { batch in try batch.append(event("t", 1)) }
        let retry = try pipeline.submit(WriteOptions(idempotencyKey: "k")) { batch in try batch.append(event("t", 1)) }
        let expected = try pipeline.submit(WriteOptions(expectedHead: 1)) { batch in try batch.append(event("t", 2)) }
        try pipeline.waitForAll()
        #expect(try first.wait().positions == 1...1)
        #expect(try retry.wait().isRetry)
        #expect(try expected.wait().positions == 2...2)
        #expect { try store.pipeline().submit(WriteOptions(idempotencyKey: "")) { _ in } } throws: {
            ($0 as? EventLogError)?.code == .invalidArgument
        }
    }

    /// Writes 1…`applied` committed, `failedAt` failed with its own error,
    /// the rest halted naming it; the log holds the applied ones only.
    private func expectHalted(_ tickets: [PipelinedWrite<Void>], failedAt: Int, store: EventStore<CountingViews>, applied: Int) throws {
        for (index, ticket) in tickets.enumerated() {
            let n = index + 1
            if n < failedAt {
                #expect(try ticket.wait().positions == UInt64(n)...UInt64(n))
            } else if n == failedAt {
                #expect(throws: Refused(n: failedAt)) { try ticket.wait() }
            } else {
                #expect { try ticket.wait() } throws: { error in
                    guard let error = error as? EventLogError else { return false }
                    return error.code == .pipelineHalted && error.message.contains("write \(failedAt) before it failed")
                }
            }
        }
        #expect(try store.head() == UInt64(applied))
        #expect(try store.read { try store.views.counts.total(in: $0) } == UInt64(applied))
    }

    private func expectClosedAfterFailure(_ pipeline: WritePipeline<CountingViews>, store: EventStore<CountingViews>) throws {
        #expect { try pipeline.submit { batch in try batch.append(event("t", 99)) } } throws: {
            ($0 as? EventLogError)?.code == .pipelineHalted
        }
        #expect(pipeline.firstFailure as? Refused == Refused(n: 3))
        #expect(try store.head() == 2)
    }
}
