import Foundation
import LMDB
import Testing
@testable import ActivityDomain

@Suite("Handoff (SPEC §3)")
struct HandoffTests {
    @Test("the user's other devices, most recently made current first; another user's never")
    func ordering() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            let u1 = store.user("u1"), u2 = store.user("u2")
            try u1.createActivity(makeActivity("phone1", device: "phone", user: "u1"))
            try u1.createActivity(makeActivity("tablet1", device: "tablet"))
            try u1.createActivity(makeActivity("laptop1", device: "laptop"))
            try u2.createActivity(makeActivity("watch2", device: "watch"))
            // u2's tablet has an activity with u1's id: it is another activity.
            try u2.createActivity(makeActivity("tablet1", device: "tablet"))
            try store.createActivity(makeActivity("tv", device: "tv"))
            try u1.becomeCurrent("tablet1", at: at(1))
            try u1.becomeCurrent("phone1", at: at(2))
            try u2.becomeCurrent("watch2", at: at(3))
            try store.becomeCurrent("tv", at: at(4))
            try u1.becomeCurrent("laptop1", at: at(5))
            try u2.becomeCurrent("tablet1", at: at(5.5))
            #expect(try u1.handoffCandidates(device: "desktop", now: at(6)).map(\.activity.activity)
                    == ["laptop1", "phone1", "tablet1"])
            #expect(try u1.handoffCandidates(device: "laptop", now: at(6)).map(\.activity.activity)
                    == ["phone1", "tablet1"])
            #expect(try u2.handoffCandidates(device: "phone", now: at(6)).map(\.activity.activity) == ["tablet1", "watch2"])
            #expect(try store.handoffCandidates(device: "phone", now: at(6)).map(\.activity.activity) == ["tv"])
            // Making one current again moves it to the front.
            try u1.resignCurrent("tablet1", at: at(7))
            try u1.becomeCurrent("tablet1", at: at(8))
            #expect(try u1.handoffCandidates(device: "desktop", now: at(9)).map(\.activity.activity)
                    == ["tablet1", "laptop1", "phone1"])
        }
    }

    @Test("only eligible, unexpired activities are offered")
    func eligibilityAndExpiry() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("noHandoff", device: "d1") { $0.eligibleForHandoff = false })
            try store.createActivity(makeActivity("expiring", device: "d2") { $0.expirationDate = at(10) })
            try store.becomeCurrent("noHandoff", at: at(1))
            try store.becomeCurrent("expiring", at: at(2))
            #expect(try store.handoffCandidates(device: "x", now: at(9)).map(\.activity.activity) == ["expiring"])
            #expect(try store.handoffCandidates(device: "x", now: at(10)).isEmpty)
        }
    }

    @Test("encoded userInfo above the limit is not offered; the limit is a setting")
    func sizeLimit() throws {
        // {"k":"…"} is 8 bytes around the string.
        let fits: [Name: UserInfoValue] = ["k": .string(String(repeating: "x", count: 3072 - 8))]
        let tooBig: [Name: UserInfoValue] = ["k": .string(String(repeating: "x", count: 3072 - 7))]
        #expect(ActivityStore.encodedUserInfoSize(fits) == 3072)
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("fits", device: "d1") { $0.userInfo = fits })
            try store.createActivity(makeActivity("tooBig", device: "d2") { $0.userInfo = tooBig })
            try store.becomeCurrent("fits", at: at(1))
            try store.becomeCurrent("tooBig", at: at(2))
            #expect(try store.handoffCandidates(device: "x", now: at(3)).map(\.activity.activity) == ["fits"])
        }
        try withStore(handoffLimit: 10_000) { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("tooBig", device: "d2") { $0.userInfo = tooBig })
            try store.becomeCurrent("tooBig", at: at(2))
            #expect(try store.handoffCandidates(device: "x", now: at(3)).count == 1)
        }
    }
}
