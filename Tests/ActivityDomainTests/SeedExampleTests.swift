import Foundation
import Testing
@testable import ActivityDomain

/// The example of Apple's NSUserActivity reference (`seeds/001_*.txt`):
///
///     NSUserActivity *currentActivity = [[NSUserActivity alloc] initWithActivityType:@"com.companyName.productName.activityName01"];
///     currentActivity.title = @"Current Activity";
///     currentActivity.userInfo = @{@"informationKey" : @"value"};
///     [currentActivity setEligibleForHandoff:YES];
///     [currentActivity setEligibleForSearch:NO];
///     [currentActivity setEligibleForPublicIndexing:NO];
///     [currentActivity becomeCurrent];
@Suite("The seeds' example")
struct SeedExampleTests {
    static let type01 = "com.companyName.productName.activityName01"
    static let type02 = "com.companyName.productName.activityName02"

    @Test("becomeCurrent: current for Handoff, not saved for search")
    func appleExample() throws {
        try withStore { store in
            // Info.plist: NSUserActivityTypes = [activityName01, activityName02]
            try store.declareActivityTypes([Self.type01, Self.type02])
            let appleseed = store.user("appleseed")
            var activity = UserActivity(activity: "currentActivity", activityType: Self.type01, device: "iPhone", user: "appleseed")
            activity.title = "Current Activity"
            activity.userInfo = ["informationKey": "value"]
            activity.eligibleForHandoff = true
            activity.eligibleForSearch = false
            activity.eligibleForPublicIndexing = false
            try appleseed.createActivity(activity, at: at(0))
            let result = try appleseed.becomeCurrent("currentActivity", at: at(1))
            #expect(result.eventTypes == [ActivityEventCatalog.activityBecameCurrent])

            // The current-activity view holds exactly this activity on this device.
            let current = try appleseed.currentActivities()
            #expect(current.count == 1)
            #expect(current[0].device == "iPhone")
            #expect(current[0].activity == activity)
            #expect(current[0].becameCurrentAt == at(1))
            // "After this, the activity should be available for Handoff" — on the user's other devices.
            #expect(try appleseed.handoffCandidates(device: "iPad", now: at(2)).map(\.activity) == [activity])
            #expect(try appleseed.handoffCandidates(device: "iPhone", now: at(2)).isEmpty)
            // Search is off: nothing is saved, nothing resolves.
            #expect(try appleseed.savedActivities().isEmpty)
            #expect(try appleseed.resolve("currentActivity") == .unknown)

            // "Only one activity may be current at a time on a device": a second
            // one supersedes it (SPEC §3: the first becomes inactive, not invalidated).
            try appleseed.createActivity(UserActivity(activity: "second", activityType: Self.type02, device: "iPhone", user: "appleseed"))
            #expect(try appleseed.becomeCurrent("second", at: at(3)).superseded == "currentActivity")
            #expect(try appleseed.activity("currentActivity")?.state == .inactive)
            // resignCurrent marks it inactive without invalidating; invalidate ends it.
            try appleseed.resignCurrent("second")
            try appleseed.invalidate("second")
            try expectRejected(.activityInvalidated, by: store) { try appleseed.becomeCurrent("second") }
        }
    }
}
