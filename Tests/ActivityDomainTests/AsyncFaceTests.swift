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
                        try await space.createActivity(makeActivity("a\(i)", device: "phone") {
                            $0.title = "\(user) latte \(i)"
                            $0.eligibleForSearch = true
                        })
                        try await space.becomeCurrent("a\(i)")
                    }
                }
            }
            try await group.waitForAll()
        }
        // At least the 81 commands' events, one position each, the chain whole.
        #expect(try await store.read { txn in try store.eventStore.head(in: txn) } >= 1 + 4 * 10 * 2)
        #expect(try store.eventStore.verify().isValid)
        for user in users {
            let space = store.user(user)
            let current = try await space.currentActivities()
            #expect(current.map(\.activity.activity) == ["a9"], "\(user)")
            let saved = try await space.savedActivities()
            #expect(saved.count == 10 && saved.allSatisfy { $0.activity.title?.hasPrefix(user) == true }, "\(user)")
            let hits = try await space.search("latte", now: at(3600), after: try store.head())
            #expect(hits.count == 10, "\(user)")
            #expect(try await space.reading { try $0.activities().count } == 10)
        }
        let summaries = try await store.users()
        #expect(summaries.map(\.user) == users)
        let rejected = await #expect(throws: ActivityError.self) { try await store.user("alice").becomeCurrent("missing") }
        #expect(rejected?.code == .unknownActivity)
    }
}
