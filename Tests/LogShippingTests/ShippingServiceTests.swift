import ActivityDomain
import EventLog
import Foundation
import LogShipping
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// The shipper and the follower as swift-service-lifecycle services, against
/// the PostgreSQL server of `Scripts/with-postgres.sh` (skipped without one,
/// outside CI): a leader's writes reach a follower, where a user's change
/// feed and `waitForPosition` see them, and graceful shutdown stops both.
@Suite("Shipping as services")
struct ShippingServiceTests {
    static let url = ProcessInfo.processInfo.environment["EVENTLOG_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let enabled = url != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    static func options() -> ActivityStoreOptions {
        var options = ActivityStoreOptions()
        options.store.durability = .noSync
        return options
    }

    // The limit is a hang guard, generous: the whole suite runs in parallel
    // on two cores, and synchronous tests can hold the cooperative threads
    // that this test's tasks wait for during minutes.
    @Test("a follower in a ServiceGroup feeds a user's change feed on the follower; graceful shutdown stops shipper and follower",
          .enabled(if: enabled), .timeLimit(.minutes(10)))
    func followerFeedsChanges() async throws {
        let url = try #require(Self.url, "CI=true but EVENTLOG_TEST_POSTGRES_URL is not set: run through Scripts/test.sh")
        let leaderPath = FileManager.default.temporaryDirectory.appendingPathComponent("ship-leader-\(UUID().uuidString)").path
        let followerPath = FileManager.default.temporaryDirectory.appendingPathComponent("ship-follower-\(UUID().uuidString)").path
        defer {
            try? FileManager.default.removeItem(atPath: leaderPath)
            try? FileManager.default.removeItem(atPath: followerPath)
        }
        let leader = try ActivityStore.open(path: leaderPath, options: Self.options())
        let follower = try ActivityStore.open(path: followerPath, options: Self.options())
        defer {
            leader.close()
            follower.close()
        }
        let stream = "service-\(UUID().uuidString.prefix(8))"
        try await leader.declareActivityTypes(["com.example.app.viewOrder"])
        try await leader.user("alice").write { try $0.createActivity(UserActivity(activity: "a1", activityType: "com.example.app.viewOrder", device: "phone")) }
        var shipOptions = ShipOptions()
        shipOptions.pollInterval = .milliseconds(20)
        let shipper = try LogShipper(store: leader.eventStore, to: PostgresLocation(url: url), stream: stream, options: shipOptions)
        // The stream exists before the follower looks. A transient failure
        // (PostgreSQL's answer not seen within the shipper's deadline while
        // the suite's synchronous tests hold the cooperative threads) is
        // tried again, as `run()` does.
        while true {
            do {
                _ = try await shipper.run(once: true)
                break
            } catch let error as ShippingError where error.isTransient {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        var followOptions = FollowOptions()
        followOptions.pollInterval = .milliseconds(20)
        let logFollower = try LogFollower(store: follower.eventStore, from: PostgresLocation(url: url), stream: stream, options: followOptions)

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await shipper.run() }
                group.addTask { try await logFollower.run() }
                // The laptop listens on the follower; the phone writes to the leader.
                try await follower.waitForPosition(try leader.head(), timeout: .seconds(300))   // a hang guard
                var feed = follower.user("alice").changes(from: try follower.head() + 1).makeAsyncIterator()
                let written = try await leader.user("alice").write { try $0.becomeCurrent("a1") }.positions!.upperBound
                try await follower.waitForPosition(written, timeout: .seconds(300))   // a hang guard
                #expect(try await follower.user("alice").read { try $0.currentActivities() }.map(\.activity.activity) == ["a1"])
                let change = try #require(try await feed.next())
                guard case .becameCurrent("a1", "phone", nil) = change.change else {
                    Issue.record("expected a1 becoming current on the phone, got \(change)")
                    return
                }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()   // both return, without an error
            }
        }
        #expect(try follower.head() == leader.head())
    }
}
