import Foundation
import LMDB
@testable import ActivityDomain

/// Random commands over small pools of ids, so that collisions, supersession,
/// invalid states and missing keys happen often. Valid and invalid alike.
struct RandomCommands {
    var rng: SeededGenerator
    /// Recent ids (plus the empty one): commands mostly name activities that
    /// exist, while fresh ids keep live activities coming as others are invalidated.
    var activityIDs = ["a0", "a1", "a2", "a3", "a4", "a5", ""]
    let devices = ["phone", "laptop", "tablet"]
    // The default space: the isolation of spaces has its own property test.
    let users: [String?] = [nil]
    let types = ["com.example.app.viewOrder", "com.example.app.editOrder", "com.example.app.viewOrder", "com.example.app.undeclared", "notReverseDNS"]
    let persistentIDs: [String?] = ["p0", "p1", "a1", nil]
    let keys = ["k0", "k1", "k2"]

    init(seed: UInt64) { rng = SeededGenerator(seed: seed) }

    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &rng)! }

    mutating func value(depth: Int = 0) -> UserInfoValue {
        switch Int.random(in: 0..<(depth > 1 ? 6 : 8), using: &rng) {
        case 0: return .integer(Int64.random(in: -2...2, using: &rng))
        case 1: return .string(pick(["x", "y", "ü"]))
        case 2: return .double(pick([0.5, -1.25]))
        case 3: return .bool(chance(0.5))
        case 4: return .date(at(Double(Int.random(in: 0...100, using: &rng))))
        case 5: return .null
        case 6: return .array([value(depth: depth + 1), value(depth: depth + 1)])
        default: return .dictionary([Name(pick(keys)): value(depth: depth + 1)])
        }
    }

    mutating func userInfo() -> [Name: UserInfoValue] {
        var result: [Name: UserInfoValue] = [:]
        for key in keys where chance(0.5) { result[Name(key)] = value() }
        return result
    }

    mutating func requiredKeys() -> Set<Name>? {
        pick([nil, nil, ["k0"], ["k0", "k1"], []])
    }

    mutating func url() -> URL? {
        pick([nil, nil, URL(string: "https://example.com/o/1"), URL(string: "https://example.com/o/2"), URL(string: "ftp://example.com/x")])
    }

    mutating func activity(step: Int) -> UserActivity {
        var id = pick(activityIDs)
        if chance(0.5) {
            id = "a\(step)"
            activityIDs.append(id)
            if activityIDs.count > 10 { activityIDs.remove(at: 0) }
        }
        var activity = UserActivity(activity: id, activityType: pick(types), device: pick(devices), user: pick(users))
        if chance(0.5) { activity.title = pick(["Latte", "Tea"]) }
        activity.userInfo = userInfo()
        activity.requiredUserInfoKeys = requiredKeys()
        if chance(0.3) { activity.keywords = ["coffee"] }
        activity.persistentIdentifier = pick(persistentIDs)
        if chance(0.3) { activity.targetContentIdentifier = pick(["t0", "t1"]) }
        activity.webpageURL = url()
        if chance(0.3) { activity.expirationDate = at(Double(step + Int.random(in: -20...60, using: &rng))) }
        activity.eligibleForHandoff = chance(0.8)
        activity.eligibleForSearch = chance(0.5)
        activity.eligibleForPrediction = chance(0.2)
        activity.eligibleForPublicIndexing = chance(0.05)
        return activity
    }

    mutating func update(step: Int) -> ActivityUpdate {
        var update = ActivityUpdate()
        if chance(0.3) { update.title = chance(0.8) ? .some(pick(["Latte", "Tea", "Oat"])) : .some(nil) }
        if chance(0.3) { update.userInfo = userInfo() }
        if chance(0.2) { update.requiredUserInfoKeys = .some(requiredKeys()) }
        if chance(0.2) { update.persistentIdentifier = .some(pick(persistentIDs)) }
        if chance(0.2) { update.targetContentIdentifier = .some(pick(["t0", "t1", nil])) }
        if chance(0.2) { update.webpageURL = .some(url()) }
        if chance(0.2) { update.expirationDate = .some(chance(0.7) ? at(Double(step + Int.random(in: -20...60, using: &rng))) : nil) }
        if chance(0.2) { update.eligibleForSearch = chance(0.5) }
        if chance(0.1) { update.eligibleForPrediction = chance(0.5) }
        if chance(0.1) { update.eligibleForHandoff = chance(0.5) }
        if chance(0.1) { update.eligibleForPublicIndexing = chance(0.5) }
        if chance(0.1) { update.keywords = chance(0.5) ? ["tea"] : [] }
        return update
    }

    mutating func command(step: Int) -> ActivityCommand {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<4: return .declareActivityTypes(chance(0.9) ? [pick(Array(types.prefix(2)))] : [pick(types)])
        case 4..<22: return .createActivity(activity(step: step))
        case 22..<34: return .updateActivity(pick(activityIDs), update(step: step))
        case 34..<44: return .addUserInfoEntries(pick(activityIDs), userInfo())
        case 44..<70: return .becomeCurrent(pick(activityIDs))
        case 70..<80: return .resignCurrent(pick(activityIDs))
        case 80..<82: return .invalidate(pick(activityIDs))
        case 82..<96: return .deleteSavedUserActivities(persistentIdentifiers: [pick(["p0", "p1", "a1", "nothing"])])
        default: return .deleteAllSavedUserActivities
        }
    }
}
