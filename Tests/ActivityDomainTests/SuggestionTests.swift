import Foundation
import Testing
@testable import ActivityDomain

@Suite("Suggestions (Siri predictions)")
struct SuggestionTests {
    @Test("eligible for prediction, not expired; ranked by how often and how recently each became current")
    func ranking() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            let alice = store.user("alice")
            func create(_ id: String, predict: Bool = true, expires: Date? = nil) throws {
                var activity = makeActivity(id, device: id)
                activity.eligibleForPrediction = predict
                activity.expirationDate = expires
                try alice.createActivity(activity, at: at(0))
            }
            try create("often")
            try create("recent")
            try create("notForPrediction", predict: false)
            try create("expiring", expires: at(10 * 86_400))
            // "often": three times, a week ago; "recent": once, now.
            let week = 7.0 * 86_400
            for i in 0..<3 {
                try alice.becomeCurrent("often", at: at(Double(i)))
                try alice.resignCurrent("often", at: at(Double(i) + 0.5))
            }
            try alice.becomeCurrent("notForPrediction", at: at(week))
            try alice.becomeCurrent("expiring", at: at(week))
            try alice.becomeCurrent("recent", at: at(week))
            let now = at(week + 1)
            let ranked = try alice.suggestions(now: now)
            #expect(ranked.map(\.key) == ["often", "expiring", "recent"])
            // 3 uses a week old ≈ 3 × ½; 1 use now ≈ 1.
            #expect(abs(ranked[0].score - 1.5) < 0.01)
            #expect(abs(ranked[2].score - 1.0) < 0.01)
            // Expired at `now`: gone. The limit cuts the list.
            #expect(try alice.suggestions(now: at(11 * 86_400)).map(\.key) == ["often", "recent"])
            #expect(try alice.suggestions(now: now, limit: 1).map(\.key) == ["often"])
            // Another user's suggestions are their own; the default space has none.
            #expect(try store.suggestions(now: now).isEmpty)
            #expect(try store.user("bob").suggestions(now: now).isEmpty)
            // Deleting all saved copies resets the counts: becoming current again starts at 1.
            try alice.deleteAllSavedUserActivities(at: at(week + 2))
            #expect(try alice.suggestions(now: now).isEmpty)
            try alice.resignCurrent("expiring", at: at(week + 3))
            try alice.becomeCurrent("expiring", at: at(week + 4))
            #expect(try alice.suggestions(now: at(week + 4)).map(\.score) == [1])
        }
    }

    @Test("the score is the frecency formula of Docs/Semantics.md")
    func formula() {
        let day: Int64 = 86_400_000_000
        #expect(Suggestion.score(count: 0, recentMicros: [], nowMicros: 0) == 0)
        #expect(Suggestion.score(count: 1, recentMicros: [0], nowMicros: 0) == 1)
        #expect(Suggestion.score(count: 1, recentMicros: [0], nowMicros: 7 * day) == 0.5)
        // Twenty uses, the last ten kept: count × the mean weight of those ten.
        #expect(Suggestion.score(count: 20, recentMicros: Array(repeating: 0, count: 10), nowMicros: 14 * day) == 5)
        // A use after `now` weighs 1, not more.
        #expect(Suggestion.score(count: 1, recentMicros: [5 * day], nowMicros: 0) == 1)
    }
}
