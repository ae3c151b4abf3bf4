import EventLog
import Foundation
import Testing
@testable import ActivityDomain

/// A user's change feed (`changes(from:)`): what another device of the user
/// follows for Handoff.
@Suite("Change feed")
struct ChangeFeedTests {
    /// The positions of `user`'s events, by a filter over the whole log
    /// independent of the feed's: each event's user (the catalog's reading
    /// of its payload) compared with `user` as UTF-8 bytes.
    static func positionsInLog(of user: String, in store: ActivityStore) throws -> [Position] {
        let bytes = Array(user.utf8)
        return try store.eventStore.events(from: 1).filter { event in
            guard let owner = try ActivityEventCatalog.user(of: event) else { return false }
            return Array(owner.utf8) == bytes
        }.map(\.position)
    }

    /// Reads `count` changes of a feed; fails (rather than waits for ever)
    /// when they do not come within 60 seconds.
    static func take(_ count: Int, from feed: UserChanges) async throws -> [UserChange] {
        try await withThrowingTaskGroup(of: [UserChange]?.self) { group in
            group.addTask {
                var taken: [UserChange] = []
                guard count > 0 else { return taken }
                for try await change in feed {
                    taken.append(change)
                    if taken.count == count { break }
                }
                return taken
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let taken = first else {
                Issue.record("the feed did not yield \(count) changes within 60 seconds")
                return []
            }
            return taken
        }
    }

    @Test("under 8 concurrent writers and 300 users, each feed yields exactly its user's events, catching up then live")
    func neverAnotherUsersEvent() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        defer { store.close() }
        try await store.declareActivityTypes([viewOrder])
        let users = (0..<300).map { "user\($0)" } + ["jos\u{e9}", "jose\u{301}"]   // canonically equal, two users
        // Some history before the feeds start: they catch up on it.
        for user in users.prefix(40) { try await store.user(user).write { try $0.createActivity(makeActivity("before")) } }
        let watched = ["user0", "user7", "user299", "jos\u{e9}", "jose\u{301}", ""]
        let writers = 8, rounds = 60
        let feeds = watched.map { store.user($0).changes(from: 1) }
        // Each writer works through its own users, with every kind of event.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for round in 0..<rounds {
                        let user = users[(writer + round * writers) % users.count]
                        let space = user == "user7" && round % 5 == 0 ? store.user("") : store.user(user)
                        let id = "w\(writer)-\(round)"
                        try await space.write { try $0.createActivity(makeActivity(id, device: "d\(round % 3)") { $0.eligibleForSearch = true }) }
                        try await space.write { try $0.becomeCurrent(id) }
                        try await space.write { try $0.indexSearchableItems([makeItem("i-\(id)", title: "item \(round)")]) }
                        if round % 4 == 0 { try await space.write { try $0.deleteSearchableItems(withIdentifiers: ["i-\(id)"]) } }
                        if round % 6 == 0 { try await space.write { try $0.invalidate(id) } }
                    }
                }
            }
            try await group.waitForAll()
        }
        let expected = try watched.map { try Self.positionsInLog(of: $0, in: store) }
        #expect(expected.allSatisfy { !$0.isEmpty }, "every watched user wrote")
        for (index, feed) in feeds.enumerated() {
            let changes = try await Self.take(expected[index].count, from: feed)
            #expect(changes.map(\.position) == expected[index], "feed of \(watched[index])")
            // Every change is of the user: its event's user field, by bytes.
            let events = try changes.map { try #require(try store.eventStore.event(at: $0.position)) }
            #expect(try events.allSatisfy { Array((try ActivityEventCatalog.user(of: $0) ?? "-").utf8) == Array(watched[index].utf8) })
        }
        // The two canonically equal names are two users with their own events.
        #expect(!expected[3].isEmpty && !expected[4].isEmpty && Set(expected[3]).isDisjoint(with: expected[4]))
    }

    @Test("a feed that caught up goes live: the next commits come without a gap or a duplicate")
    func catchUpThenLive() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        defer { store.close() }
        try await store.declareActivityTypes([viewOrder])
        let alice = store.user("alice"), bob = store.user("bob")
        for i in 0..<5 { try await alice.write { try $0.createActivity(makeActivity("a\(i)")) } }
        var options = SubscriptionOptions()
        options.chunk = 2   // catching up crosses several reads
        var feed = alice.changes(from: 1, options: options).makeAsyncIterator()
        var seen: [Position] = []
        for _ in 0..<5 { seen.append(try #require(try await feed.next()).position) }
        #expect(seen == Array(2...6))
        // Live: commits made while the feed waits reach it, each once.
        let writer = Task {
            for i in 5..<25 {
                try await bob.write { try $0.createActivity(makeActivity("b\(i)")) }
                try await alice.write { try $0.createActivity(makeActivity("a\(i)")) }
                if i % 3 == 0 { try await alice.write { try $0.becomeCurrent("a\(i)") } }
            }
        }
        while true {
            let change = try #require(try await feed.next())
            seen.append(change.position)
            if case .becameCurrent("a24", _, _) = change.change { break }   // alice's last event
        }
        try await writer.value
        #expect(seen == (try Self.positionsInLog(of: "alice", in: store)))
        #expect(Set(seen).count == seen.count)
    }

    @Test("a feed from the position a read saw picks up exactly what came after it")
    func fromAReadsPosition() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        defer { store.close() }
        try await store.declareActivityTypes([viewOrder])
        let alice = store.user("alice")
        try await alice.write { try $0.createActivity(makeActivity("a1", device: "phone") { $0.title = "Latte" }) }
        let (current, position) = try await alice.read { space in (try space.currentActivities(), space.position) }
        let head = try store.head()
        #expect(current.isEmpty && position == head)
        try await alice.write { try $0.becomeCurrent("a1") }   // on the phone; the laptop follows
        let changes = try await Self.take(1, from: alice.changes(from: position + 1))
        guard case .becameCurrent(let activity, let device, let superseded)? = changes.first?.change else {
            Issue.record("expected becameCurrent, got \(changes)")
            return
        }
        #expect(activity == "a1" && device == "phone" && superseded == nil)
    }

    @Test("a feed ends with userForgotten when its user is forgotten; the events before come first")
    func endsOnForget() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        defer { store.close() }
        try await store.declareActivityTypes([viewOrder])
        let alice = store.user("alice")
        try await alice.write { try $0.createActivity(makeActivity("a1")) }
        var feed = alice.changes(from: 1).makeAsyncIterator()
        #expect(try await feed.next()?.type == ActivityEventCatalog.activityCreated)
        let forget = Task {
            try await Task.sleep(for: .milliseconds(50))   // the feed is waiting, live
            try await store.user("bob").write { try $0.createActivity(makeActivity("b1")) }
            return try store.forgetUser("alice").positions!.lowerBound
        }
        do {
            let next = try await feed.next()
            Issue.record("expected the feed to end at the forget, got \(String(describing: next))")
        } catch ActivityError.userForgotten {
            // expected: the feed ends at the forget
        }
        let position = try await forget.value
        // It stays ended, and a feed from before the forget ends there too,
        // after the (redacted) history: nothing of alice's comes back.
        #expect(try await feed.next() == nil)
        var again = alice.changes(from: 1).makeAsyncIterator()
        let thrown = await #expect(throws: ActivityError.self) { _ = try await again.next() }
        #expect(thrown?.code == .userForgotten && thrown?.value == "\(position)")
        // After the forget, alice may come back: a feed from after it sees her new events.
        try await alice.write { try $0.createActivity(makeActivity("a2")) }
        let later = try await Self.take(1, from: alice.changes(from: position + 1))
        #expect(later.first?.type == ActivityEventCatalog.activityCreated)
    }

    @Test("a feed on a follower sees the leader's becomeCurrent as the follower appends it; waitForPosition reads its writes")
    func onAFollower() async throws {
        let leaderPath = temporaryDirectory(), followerPath = temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: leaderPath)
            try? FileManager.default.removeItem(atPath: followerPath)
        }
        let leader = try ActivityStore.open(path: leaderPath, options: testOptions())
        let follower = try ActivityStore.open(path: followerPath, options: testOptions())
        defer {
            leader.close()
            follower.close()
        }
        // What a LogFollower does with the records it reads from PostgreSQL.
        func ship() throws {
            let from = try follower.head()
            let records = try leader.eventStore.records(after: from, limit: 10_000)
            if !records.isEmpty { try follower.eventStore.appendRecords(records) }
        }
        try await leader.declareActivityTypes([viewOrder])
        try await leader.user("alice").write { try $0.createActivity(makeActivity("a1", device: "phone")) }
        try ship()
        var feed = follower.user("alice").changes(from: try follower.head() + 1).makeAsyncIterator()
        let written = try await leader.user("alice").write { try $0.becomeCurrent("a1") }.positions!.upperBound
        // Not there yet: the wait times out with how far the follower got.
        let timeout = await #expect(throws: EventLogError.self) { try await follower.waitForPosition(written, timeout: .milliseconds(50)) }
        #expect(timeout?.code == .timedOut)
        let waiting = Task { try await follower.waitForPosition(written, timeout: .seconds(30)) }
        try ship()
        try await waiting.value
        await #expect(try follower.user("alice").read { try $0.currentActivities() }.map(\.activity.activity) == ["a1"])
        let change = try #require(try await feed.next())
        guard case .becameCurrent("a1", "phone", nil) = change.change else {
            Issue.record("expected a1 becoming current on the phone, got \(change)")
            return
        }
    }
}
