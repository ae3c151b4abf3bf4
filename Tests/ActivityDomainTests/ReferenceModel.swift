import Foundation
@testable import ActivityDomain

/// A small, independent statement of SPEC §3's rules: the randomized test
/// runs every command against it and against the store, and compares.
/// Written for clarity, not speed; it shares only the syntax check of
/// activity types and the application of an update's fields with the code
/// under test.
struct ReferenceModel {
    var types: Set<String> = []
    var activities: [String: (activity: UserActivity, state: ActivityState)] = [:]
    /// device → activity id
    var current: [String: String] = [:]
    /// key → saved copy
    var saved: [String: UserActivity] = [:]

    enum Outcome: Equatable {
        case changed
        case unchanged
        case rejected(ActivityError.Code)
    }

    private struct Rejection: Error { let code: ActivityError.Code }

    mutating func apply(_ command: ActivityCommand, at time: Date) -> Outcome {
        var copy = self
        do {
            let changed = try copy.run(command, at: time)
            self = copy
            return changed ? .changed : .unchanged
        } catch let rejection as Rejection {
            return .rejected(rejection.code)
        } catch {
            fatalError("unexpected \(error)")
        }
    }

    private func checkID(_ id: String) throws {
        if id.isEmpty { throw Rejection(code: .identifierEmpty) }
        if id.utf8.count > 256 { throw Rejection(code: .identifierTooLong) }
    }

    private func checkProperties(_ a: UserActivity) throws {
        try checkID(a.activity)
        try checkID(a.activityType)
        if !ActivityRules.isReverseDNS(a.activityType) { throw Rejection(code: .malformedActivityType) }
        if let url = a.webpageURL, !["http", "https"].contains(url.scheme?.lowercased() ?? "") {
            throw Rejection(code: .invalidWebpageURL)
        }
        if a.eligibleForPublicIndexing && a.webpageURL == nil && (a.requiredUserInfoKeys ?? []).isEmpty {
            throw Rejection(code: .publicIndexingRequiresWebpageURLOrRequiredKeys)
        }
    }

    private func live(_ id: String) throws -> (activity: UserActivity, state: ActivityState) {
        try checkID(id)
        guard let entry = activities[id] else { throw Rejection(code: .unknownActivity) }
        if entry.state == .invalidated { throw Rejection(code: .activityInvalidated) }
        return entry
    }

    /// The copy saved when `a` is current at `time`, or nil when it is not saved.
    private func copyToSave(_ a: UserActivity, at time: Date) throws -> UserActivity? {
        guard a.eligibleForSearch || a.eligibleForPrediction else { return nil }
        if let expiry = a.expirationDate, expiry <= time { return nil }
        guard let required = a.requiredUserInfoKeys else { return a }
        if !required.isSubset(of: Set(a.userInfo.keys)) { throw Rejection(code: .missingRequiredUserInfoKeys) }
        var copy = a
        copy.userInfo = a.userInfo.filter { required.contains($0.key) }
        return copy
    }

    private mutating func save(_ copy: UserActivity?) {
        if let copy { saved[copy.persistentIdentifier ?? copy.activity] = copy }
    }

    private mutating func run(_ command: ActivityCommand, at time: Date) throws -> Bool {
        switch command {
        case .declareActivityTypes(let given):
            for type in given {
                try checkID(type)
                if !ActivityRules.isReverseDNS(type) { throw Rejection(code: .malformedActivityType) }
            }
            let new = Set(given).subtracting(types)
            types.formUnion(new)
            return !new.isEmpty
        case .createActivity(let a):
            try checkProperties(a)
            if !types.contains(a.activityType) { throw Rejection(code: .undeclaredActivityType) }
            if activities[a.activity] != nil { throw Rejection(code: .activityAlreadyExists) }
            activities[a.activity] = (a.normalized, .inactive)
            return true
        case .updateActivity(let id, let update):
            let entry = try live(id)
            let new = update.applied(to: entry.activity).activity
            try checkProperties(new)
            if new == entry.activity { return false }
            let copy = entry.state == .current ? try copyToSave(new, at: time) : nil
            activities[id]!.activity = new
            save(copy)
            return true
        case .addUserInfoEntries(let id, let entries):
            let entry = try live(id)
            var new = entry.activity
            for (key, value) in entries { new.userInfo[key] = value.normalized }
            if new == entry.activity { return false }
            let copy = entry.state == .current ? try copyToSave(new, at: time) : nil
            activities[id]!.activity = new
            save(copy)
            return true
        case .becomeCurrent(let id):
            let entry = try live(id)
            if entry.state == .current { return false }
            let copy = try copyToSave(entry.activity, at: time)
            if let other = current[entry.activity.device] { activities[other]!.state = .inactive }
            current[entry.activity.device] = id
            activities[id]!.state = .current
            save(copy)
            return true
        case .resignCurrent(let id):
            let entry = try live(id)
            if entry.state != .current { return false }
            activities[id]!.state = .inactive
            current[entry.activity.device] = nil
            return true
        case .invalidate(let id):
            try checkID(id)
            guard let entry = activities[id] else { throw Rejection(code: .unknownActivity) }
            if entry.state == .invalidated { return false }
            if entry.state == .current { current[entry.activity.device] = nil }
            activities[id]!.state = .invalidated
            return true
        case .deleteSavedUserActivities(let ids):
            for id in ids { try checkID(id) }
            if ids.isEmpty { return false }
            for id in ids where saved[id]?.persistentIdentifier == id { saved[id] = nil }
            return true
        case .deleteAllSavedUserActivities:
            saved = [:]
            return true
        case .indexSearchableItems, .deleteSearchableItems, .deleteSearchableItemsInDomains, .deleteAllSearchableItems,
             .beginIndexBatch, .endIndexBatch, .purgeExpired, .forgetUser:
            // Core Spotlight has its own model (SpotlightRandomizedTests); the random activity commands never make these.
            preconditionFailure("not an activity command: \(command.operation)")
        }
    }
}
