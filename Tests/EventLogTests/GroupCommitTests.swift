import EventLog
import Foundation
import LMDB
import Testing

/// The group commit: writes that wait together share one transaction, and
/// an async write waits without holding a thread.
@Suite("Group commit")
struct GroupCommitTests {
    @Test("async writes from 64 tasks wait in the queue together and share one commit, each in its own nested transaction")
    func asyncWritesShareACommit() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        let tasks = 64
        // A write that holds the writer until every task's write is queued.
        let gate = Gate()
        let holder = Thread {
            _ = try? store.write { batch in
                gate.wait()
                try batch.append(event("holder", 0))
            }
        }
        holder.start()
        try await waitUntil { store.groupCommitStatistics.transactions == 1 }
        try await withThrowingTaskGroup(of: (Int, WriteReceipt<Int>?).self) { group in
            for n in 0..<tasks {
                group.addTask {
                    do {
                        return (n, try await store.write { batch in
                            try batch.append(event("task", n))
                            try batch.append(event("task", n))
                            if n % 8 == 3 { throw Refused(n: n) }
                            return n
                        })
                    } catch is Refused {
                        return (n, nil)
                    }
                }
            }
            // Each task is suspended in the queue, not blocking a thread: all
            // 64 wait at once (a thread a waiting write would stop at the pool's size).
            try await waitUntil { store.groupCommitStatistics.waiting == tasks }
            gate.release()
            var committed: [Int: WriteReceipt<Int>] = [:]
            for try await (n, receipt) in group { if let receipt { committed[n] = receipt } }
            let refused = (0..<tasks).filter { $0 % 8 == 3 }
            #expect(committed.count == tasks - refused.count)
            #expect(committed.allSatisfy { $0.value.value == $0.key && $0.value.positions?.count == 2 })
        }
        let statistics = store.groupCommitStatistics
        // The holder's transaction, then one for all 64 (StoreOptions.maxGroupCommit is 64).
        #expect(statistics.transactions == 2)
        #expect(statistics.writes == 1 + tasks)
        #expect(statistics.largestGroup == tasks)
        #expect(statistics.waiting == 0)
        // A refused write undid only its own two events.
        let expected = UInt64(1 + (tasks - 8) * 2)
        #expect(try store.head() == expected)
        #expect(try await store.read { try store.views.counts.total(in: $0) } == expected)
        #expect(try store.verify().isValid)
    }

    @Test("a group is at most maxGroupCommit writes; the rest go into the next transaction")
    func groupsAreBounded() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.maxGroupCommit = 10
        let store = try EventStore<CountingViews>(path: dir.path, options: options)
        let gate = Gate()
        let holder = Thread { _ = try? store.write { _ in gate.wait() } }
        holder.start()
        try await waitUntil { store.groupCommitStatistics.transactions == 1 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<25 {
                group.addTask { try await store.append([event("t", n)]) }
            }
            try await waitUntil { store.groupCommitStatistics.waiting == 25 }
            gate.release()
            try await group.waitForAll()
        }
        let statistics = store.groupCommitStatistics
        #expect(statistics.transactions == 1 + 3)
        #expect(statistics.largestGroup == 10)
        #expect(try store.head() == 25)
    }

    @Test("a write's time is decided once, before its closure runs, and stays the same when the map grows")
    func timeIsDecidedOnce() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let reads = Recorder<Date>()
        var options = fastOptions()
        options.initialMapSize = 64 << 10
        options.clock = {
            let now = Date(timeIntervalSince1970: 1_800_000_000 + Double(reads.all.count))
            reads.append(now)
            return now
        }
        let store = try EventStore<CountingViews>(path: dir.path, options: options)
        let seen = Recorder<Date>()
        // Large enough that the 64 KiB map must grow, so the closure runs again.
        let big = (0..<40).map { event("t", $0, size: 4_000) }
        let receipt = try store.write { batch in
            seen.append(batch.time)
            for e in big { try batch.append(e) }
        }
        #expect(seen.all.count > 1, "the map grew and the closure ran again")
        #expect(reads.all.count == 1)
        #expect(Set(seen.all) == [reads.all[0]])
        let events = try store.events()
        #expect(events.count == 40 && events.allSatisfy { $0.appendedAt == reads.all[0] })
        #expect(receipt.positions == 1...40)
        // A stated time is used as it is, and the clock is not read.
        let stated = Date(timeIntervalSince1970: 1_900_000_000)
        try store.append([event("t", 99)], WriteOptions(time: stated))
        #expect(try store.event(at: 41)?.appendedAt == stated)
        #expect(reads.all.count == 1)
    }
}

/// Polls `condition` until it holds; fails the test after a minute.
func waitUntil(_ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition() {
        try #require(ContinuousClock.now < deadline, "the condition did not hold within a minute")
        try await Task.sleep(for: .milliseconds(5))
    }
}
