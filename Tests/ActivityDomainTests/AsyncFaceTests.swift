import ActivityDomain
import EventLog
import Foundation
import Testing

/// The async face: the same commands and reads from tasks, per user.
@Suite("Async face")
struct AsyncFaceTests {
    @Test("tasks of several users write at once through the async face; each user's reads see their own data")
    func concurrentUsers() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore(path: path, options: testOptions())
        try await store.declareActivityTypes([viewOrder])
        let users = ["alice", "bob", "carol", "dave"]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in users {
                group.addTask {
                    let space = store.user(user)
                    for i in 0..<10 {
                        try await space.write { try $0.createActivity(makeActivity("a\(i)", device: "phone") {
                            $0.title = "\(user) latte \(i)"
                            $0.eligibleForSearch = true
                        }) }
                        try await space.write { try $0.becomeCurrent("a\(i)") }
                    }
                }
            }
            try await group.waitForAll()
        }
        // At least the 81 commands' events, one position each, the chain whole.
        #expect(try await store.eventStore.read { txn in try store.eventStore.head(in: txn) } >= 1 + 4 * 10 * 2)
        #expect(try store.eventStore.verify().isValid)
        for user in users {
            let space = store.user(user)
            let current = try await space.read { try $0.currentActivities() }
            #expect(current.map(\.activity.activity) == ["a9"], "\(user)")
            let saved = try await space.read { try $0.savedActivities() }
            #expect(saved.count == 10 && saved.allSatisfy { $0.activity.title?.hasPrefix(user) == true }, "\(user)")
            let hits = try await space.read(after: try store.head()) { try $0.search("latte", now: at(3600)) }
            #expect(hits.count == 10, "\(user)")
            #expect(try await space.read { try $0.activities().count } == 10)
        }
        let summaries = try await store.users()
        #expect(summaries.map(\.user) == users)
        let rejected = await #expect(throws: ActivityError.self) { try await store.user("alice").write { try $0.becomeCurrent("missing") } }
        #expect(rejected?.code == .unknownActivity)
    }

    @Test("commands from 64 tasks wait together in the group commit and share one commit; a rejected one undoes only itself")
    func sixtyFourTasksShareACommit() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore(path: path, options: testOptions())
        try await store.declareActivityTypes([viewOrder])
        let before = store.eventStore.groupCommitStatistics
        // A write that holds the writer until all 64 commands are queued.
        let holding = HeldWriter(store)
        try await eventually { store.eventStore.groupCommitStatistics.transactions == before.transactions + 1 }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<64 {
                group.addTask {
                    let space = store.user("u\(n)")
                    do {
                        // Every eighth names an activity that does not exist: rejected alone.
                        if n % 8 == 5 { try await space.write { try $0.becomeCurrent("missing") } } else {
                            try await space.write { try $0.createActivity(makeActivity("a", device: "phone") { $0.title = "latte \(n)" }) }
                        }
                        return true
                    } catch let error as ActivityError where error.code == .unknownActivity {
                        return false
                    }
                }
            }
            try await eventually { store.eventStore.groupCommitStatistics.waiting == 64 }
            holding.release()
            var written = 0
            for try await ok in group where ok { written += 1 }
            #expect(written == 56)
        }
        let after = store.eventStore.groupCommitStatistics
        #expect(after.transactions - before.transactions == 2, "the holder's, then one for all 64")
        #expect(after.largestGroup == 64)
        for n in 0..<64 {
            #expect(try await store.user("u\(n)").read { try $0.activity("a") }?.activity.title == (n % 8 == 5 ? nil : "latte \(n)"))
        }
        #expect(try store.eventStore.verifyViews(full: true).isEqual)
    }
}

/// Polls `condition` until it holds; fails the test after a minute.
func eventually(_ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition() {
        try #require(ContinuousClock.now < deadline, "the condition did not hold within a minute")
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Holds a store's writer in a write of its own (on a thread) until released.
final class HeldWriter: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = false

    init(_ store: ActivityStore) {
        Thread { [self] in
            _ = try? store.eventStore.write { _ in
                condition.lock()
                while !open { condition.wait() }
                condition.unlock()
            }
        }.start()
    }

    func release() {
        condition.lock()
        open = true
        condition.broadcast()
        condition.unlock()
    }
}
