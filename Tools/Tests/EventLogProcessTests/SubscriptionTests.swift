import EventLog
import Foundation
import LMDB
import SyntheticWorkload
import Testing

/// `store.subscribe(from:)`: catch-up, then live, every position once and in order.
@Suite("Subscriptions", .serialized)
struct SubscriptionTests {
    private func events(_ count: Int, writer: UInt64, from sequence: UInt64) -> [NewEvent] {
        (0..<count).map { i in
            NewEvent(type: SyntheticEvent.type, schemaVersion: 1,
                     payload: SyntheticEvent.payload(writer: writer, sequence: sequence + UInt64(i), size: 40))
        }
    }

    @Test("delivers every position once, in order, across catch-up and live, while threads and another process append")
    func catchUpThenLive() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<SyntheticViews>(path: dir.path, options: fastOptions())
        try await store.append(events(1_500, writer: 1, from: 0))   // history to catch up on, in chunks
        let threads = 3, batches = 60, batchSize = 5
        let childBatches = 40, childBatchSize = 4
        let total = 1_500 + threads * batches * batchSize + childBatches * childBatchSize

        var options = SubscriptionOptions()
        options.chunk = 128
        options.pollInterval = .milliseconds(20)
        let fromStart = Task { () throws -> [LogRecord] in
            var seen: [LogRecord] = []
            for try await record in store.subscribe(from: 1, options: options) {
                seen.append(record)
                if seen.count == total { break }
            }
            return seen
        }
        let fromMiddle = Task { () throws -> [Position] in
            var seen: [Position] = []
            for try await record in store.subscribe(from: 1_000, options: options) {
                seen.append(record.position)
                if seen.count == total - 999 { break }
            }
            return seen
        }
        // Writers in this process (they wake the subscribers) and in another
        // one (seen by polling).
        let child = try ChildProcess("SyntheticAppender", [
            "append", "--store", dir.path, "--writer", "9", "--batches", "\(childBatches)", "--batch-size", "\(childBatchSize)",
            "--durability", "noSync",
        ], capturingErrors: true)
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for b in 0..<batches {
                try! store.append(events(batchSize, writer: UInt64(2 + t), from: UInt64(b * batchSize)))
                usleep(300)   // so that subscribers are caught up and waiting between some commits
            }
        }
        let (_, status, errors) = child.finishWithErrors()
        #expect(status == 0, "\(errors)")
        let watchdog = Task {
            // Only against a hang: in the full suite on 2 cores, tests that wait on
            // child processes can hold the cooperative threads for minutes.
            try await Task.sleep(for: .seconds(900))
            fromStart.cancel()
            fromMiddle.cancel()
        }
        let records = try await fromStart.value
        let middle = try await fromMiddle.value
        watchdog.cancel()

        #expect(try store.head() == Position(total))
        try #require(records.count == total, "the subscription delivered \(records.count) of \(total) records before the watchdog")
        #expect(records.map(\.position) == Array(1...Position(total)), "every position once, in order")
        #expect(middle == Array(1_000...Position(total)))
        // The raw records carry the chain: each link follows the one before,
        // and each record is what the log holds.
        var previous = ChainLink.zero
        for record in records {
            try record.validate()
            #expect(record.link(after: previous) == record.link, "position \(record.position)")
            previous = record.link
        }
        #expect(previous == (try store.headAndLink().link))
        let sample = records[1_234]
        #expect(try sample.event == (try store.event(at: sample.position)))
        #expect(sample == (try store.record(at: sample.position)))
    }

    @Test("a commit of this process wakes a caught-up subscription (it does not wait for its poll)")
    func wokenByCommit() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<SyntheticViews>(path: dir.path, options: fastOptions())
        var options = SubscriptionOptions()
        options.pollInterval = .seconds(3600)   // polling would never deliver within the test
        let task = Task { () throws -> [Position] in
            var seen: [Position] = []
            for try await record in store.subscribe(from: 1, options: options) {
                seen.append(record.position)
                if seen.count == 6 { break }
            }
            return seen
        }
        for round in 0..<3 {
            try await Task.sleep(for: .milliseconds(50))   // let it catch up and wait
            try await store.append(events(2, writer: 1, from: UInt64(round * 2)))
        }
        let watchdog = Task {
            // Only against a hang: in the full suite on 2 cores, tests that wait on
            // child processes can hold the cooperative threads for minutes.
            try await Task.sleep(for: .seconds(900))
            task.cancel()
        }
        #expect(try await task.value == [1, 2, 3, 4, 5, 6])
        watchdog.cancel()
    }

    @Test("a caught-up subscription ends when its task is cancelled")
    func cancellation() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<SyntheticViews>(path: dir.path, options: fastOptions())
        try await store.append(events(3, writer: 1, from: 0))
        let task = Task { () throws -> Int in
            var count = 0
            for try await _ in store.subscribe(from: 1) { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        #expect(try await task.value == 3)
    }

    @Test("the async face: concurrent tasks append off the cooperative threads; positions are unique and gapless")
    func asyncWrites() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<SyntheticViews>(path: dir.path, options: fastOptions())
        let ranges = try await withThrowingTaskGroup(of: ClosedRange<Position>.self) { group in
            for writer in 1...20 {
                group.addTask {
                    try await store.append(self.events(5, writer: UInt64(writer), from: 0)).positions!
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(ranges.flatMap { Array($0) }.sorted() == Array(1...100))
        let head = try await store.read { txn in try store.head(in: txn) }
        #expect(head == 100)
        let appended = try await store.write { batch in try batch.append(self.events(1, writer: 99, from: 0)[0]).position }
        #expect(appended.value == 101)
    }
}
