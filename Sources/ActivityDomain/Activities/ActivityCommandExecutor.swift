import EventLog
import Foundation
import LMDB

/// Runs commands inside the engine's write path: validates each against the
/// state the projections hold (including events this batch already
/// appended), turns it into events and appends them, so that the
/// projections apply them in the same transaction.
///
/// Every command acts in one user space: it reads that space's views only
/// and its events carry the space (`user`). Every check comes before the
/// first append of a command; a command that throws has appended nothing,
/// and the store's write aborts the whole transaction anyway.
final class ActivityCommandExecutor {
    let views: ActivityViews
    let batch: LogBatch

    /// The types of the events the current command appended.
    private var appendedTypes: [String] = []
    /// Core Spotlight's commands, with the index batches open in this transaction.
    private let spotlight: SpotlightCommandExecutor
    /// How many commands ran before the current one.
    private var commandIndex = -1
    /// The user space of the current command.
    private var user = ""
    /// The user space of the current command (for extensions in other files).
    var currentUser: String { user }
    /// Notes an event appended outside ``append(_:)``.
    func noteAppended(_ type: String) { appendedTypes.append(type) }

    init(views: ActivityViews, batch: LogBatch) {
        self.views = views
        self.batch = batch
        spotlight = SpotlightCommandExecutor(views: views, batch: batch)
    }

    /// Throws when the commands left something unfinished (an index batch
    /// begun and not ended); call after the last command.
    func finish() throws {
        try spotlight.finish()
    }

    private var txn: WriteTransaction { batch.transaction }

    /// The id of the current command's space, or ``SpaceDirectory/none``
    /// (which holds nothing) while no event of it was applied. Read each
    /// time: the command's own first event may create the space.
    private var space: UInt32 {
        get throws { try views.spaces.lookupID(of: user, in: txn) }
    }

    /// Runs `command` in `user`'s space (nil: the default space, or, for
    /// `purgeExpired`, every space).
    func execute(_ command: ActivityCommand, user: String?, at time: Date) throws -> CommandResult {
        var result = CommandResult(operation: command.operation)
        let before = batch.head
        appendedTypes = []
        commandIndex += 1
        if let user { try ActivityRules.checkUser(user, operation: command.operation) }
        self.user = user ?? ""
        switch command {
        case .declareActivityTypes(let types): try declare(types, at: time)
        case .createActivity(let activity): try create(activity, at: time)
        case .updateActivity(let id, let update): try self.update(id, update, at: time, result: &result)
        case .addUserInfoEntries(let id, let entries): try addEntries(entries, to: id, at: time, result: &result)
        case .becomeCurrent(let id): try becomeCurrent(id, at: time, result: &result)
        case .resignCurrent(let id): try resignCurrent(id, at: time)
        case .invalidate(let id): try invalidate(id, at: time)
        case .deleteSavedUserActivities(let ids): try deleteSaved(ids, at: time, result: &result)
        case .deleteAllSavedUserActivities: try deleteAllSaved(at: time, result: &result)
        case .forgetUser: try forget(at: time, result: &result)
        case .indexSearchableItems, .deleteSearchableItems, .deleteSearchableItemsInDomains, .deleteAllSearchableItems,
             .beginIndexBatch, .endIndexBatch, .purgeExpired:
            appendedTypes = try spotlight.execute(command, user: user, commandIndex: commandIndex, at: time, result: &result)
        }
        if batch.head > before { result.positions = (before + 1)...batch.head }
        result.eventTypes = appendedTypes
        return result
    }

    @discardableResult
    private func append(_ event: ActivityEvent, at time: Date) throws -> RecordedEvent {
        let recorded = try batch.append(event.newEvent(user: user, at: time))
        appendedTypes.append(recorded.type)
        return recorded
    }

    // MARK: Commands

    private func declare(_ types: [String], at time: Date) throws {
        let operation = "declareActivityTypes"
        for type in types { try ActivityRules.checkActivityTypeSyntax(type, operation: operation, field: "types") }
        var new: [String] = []
        for type in Set(types.map { Name($0) }).sorted() {
            if try !views.registry.isDeclared(type.string, in: txn) { new.append(type.string) }
        }
        guard !new.isEmpty else { return }
        var message = Activitylog_V1_ActivityTypesDeclared()
        message.types = new
        try append(.typesDeclared(message), at: time)
    }

    private func create(_ given: UserActivity, at time: Date) throws {
        let operation = "createActivity"
        var activity = given.normalized
        // The activity's `user` is its owner, the space it lives in: it
        // must name the command's space, or be left to it.
        if let owner = activity.user, !Name.equal(owner, user) {
            throw ActivityError(.invalidUser, operation: operation, field: "user", value: owner,
                                allowed: user.isEmpty ? "none (this command acts in the default space \"\")"
                                    : "\"\(user)\", the user space this command acts in, or none")
        }
        activity.user = user.isEmpty ? nil : user
        try ActivityRules.checkProperties(of: activity, operation: operation)
        guard try views.registry.isDeclared(activity.activityType, in: txn) else {
            throw ActivityError(.undeclaredActivityType, operation: operation, field: "activityType", value: activity.activityType,
                                allowed: "a type declared with declareActivityTypes")
        }
        guard try views.registry.rawRecord(activity.activity, space: try space, in: txn) == nil else {
            throw ActivityError(.activityAlreadyExists, operation: operation, field: "activity", value: activity.activity,
                                allowed: "an id no activity of this user space has (invalidated ones included)")
        }
        var message = Activitylog_V1_ActivityCreated()
        message.activity = activity.proto
        try append(.created(message), at: time)
    }

    /// The record of a live activity, or the error SPEC §8 names.
    private func liveRecord(_ id: String, operation: String) throws -> ActivityRecord {
        try ActivityRules.checkIdentifier(id, field: "activity", operation: operation)
        guard let record = try views.registry.record(id, space: try space, in: txn) else {
            throw ActivityError(.unknownActivity, operation: operation, field: "activity", value: id,
                                allowed: "the id of an activity created in this user space")
        }
        guard record.state != .invalidated else {
            throw ActivityError(.activityInvalidated, operation: operation, field: "activity", value: id,
                                allowed: "only invalidate on an invalidated activity")
        }
        return record
    }

    private func update(_ id: String, _ update: ActivityUpdate, at time: Date, result: inout CommandResult) throws {
        let operation = "updateActivity"
        let record = try liveRecord(id, operation: operation)
        let (activity, changed) = update.applied(to: record.activity)
        try ActivityRules.checkProperties(of: activity, operation: operation)
        guard !changed.isEmpty else { return }
        let copy = try copyToSave(activity, state: record.state, at: time, operation: operation)
        var message = Activitylog_V1_ActivityUpdated()
        message.activity = activity.proto
        message.changedProperties = changed
        try append(.updated(message), at: time)
        if let copy { try save(copy, trigger: .updatedWhileCurrent, at: time, result: &result) }
    }

    private func addEntries(_ given: [Name: UserInfoValue], to id: String, at time: Date, result: inout CommandResult) throws {
        let operation = "addUserInfoEntries"
        let record = try liveRecord(id, operation: operation)
        let entries = given.mapValues(\.normalized)
        try ActivityRules.checkUserInfo(entries, path: "entries", operation: operation)
        var activity = record.activity
        activity.userInfo.merge(entries) { _, new in new }
        guard activity.userInfo != record.activity.userInfo else { return }
        let copy = try copyToSave(activity, state: record.state, at: time, operation: operation)
        var message = Activitylog_V1_ActivityUserInfoEntriesAdded()
        message.activity = id
        message.entries = UserInfoValue.protoDictionary(entries)
        message.replacedKeys = entries.keys.filter { record.activity.userInfo[$0] != nil }.sorted().map(\.string)
        try append(.userInfoEntriesAdded(message), at: time)
        if let copy { try save(copy, trigger: .updatedWhileCurrent, at: time, result: &result) }
    }

    private func becomeCurrent(_ id: String, at time: Date, result: inout CommandResult) throws {
        let operation = "becomeCurrent"
        let record = try liveRecord(id, operation: operation)
        guard record.state != .current else { return }
        let copy = try copyToSave(record.activity, state: .current, at: time, operation: operation)
        var message = Activitylog_V1_ActivityBecameCurrent()
        message.activity = id
        message.device = record.activity.device
        if let superseded = try views.current.entry(onDevice: record.activity.device, space: try space, in: txn)?.activity,
           !Name.equal(superseded, id) {
            message.superseded = superseded
            result.superseded = superseded
        }
        try append(.becameCurrent(message), at: time)
        if let copy { try save(copy, trigger: .becameCurrent, at: time, result: &result) }
    }

    private func resignCurrent(_ id: String, at time: Date) throws {
        let record = try liveRecord(id, operation: "resignCurrent")
        guard record.state == .current else { return }
        var message = Activitylog_V1_ActivityResignedCurrent()
        message.activity = id
        message.device = record.activity.device
        try append(.resignedCurrent(message), at: time)
    }

    private func invalidate(_ id: String, at time: Date) throws {
        let operation = "invalidate"
        try ActivityRules.checkIdentifier(id, field: "activity", operation: operation)
        guard let record = try views.registry.record(id, space: try space, in: txn) else {
            throw ActivityError(.unknownActivity, operation: operation, field: "activity", value: id,
                                allowed: "the id of an activity created in this user space")
        }
        guard record.state != .invalidated else { return }
        var message = Activitylog_V1_ActivityInvalidated()
        message.activity = id
        message.device = record.activity.device
        message.wasCurrent = record.state == .current
        try append(.invalidated(message), at: time)
    }

    private func deleteSaved(_ ids: [String], at time: Date, result: inout CommandResult) throws {
        let operation = "deleteSavedUserActivities"
        for id in ids { try ActivityRules.checkIdentifier(id, field: "persistentIdentifiers", operation: operation) }
        // By bytes: identifiers that differ in one byte are two identifiers.
        let requested = Set(ids.map { Name($0) }).sorted().map(\.string)
        guard !requested.isEmpty else { return }
        var removed: [String] = []
        for id in requested {
            // Only copies saved under their persistentIdentifier match; a copy
            // keyed by its activity id has none.
            if let record = try views.saved.rawRecord(id, space: try space, in: txn), record.copy.hasPersistentIdentifier,
               Name.equal(record.copy.persistentIdentifier, id) {
                removed.append(id)
            }
        }
        var message = Activitylog_V1_SavedActivitiesDeleted()
        message.persistentIdentifiers = requested
        message.removedKeys = removed
        try append(.savedDeleted(message), at: time)
        result.removedKeys = removed
    }

    private func deleteAllSaved(at time: Date, result: inout CommandResult) throws {
        let keys = try views.saved.allRecords(space: try space, in: txn).map(\.key)
        var message = Activitylog_V1_SavedActivitiesAllDeleted()
        message.removedKeys = keys
        try append(.savedAllDeleted(message), at: time)
        result.removedKeys = keys
    }

    // MARK: Saving

    /// The copy to save when an activity in `state` (after the command) is
    /// saved at `time`, or nil when it is not saved. Throws for a missing
    /// required key, before anything is appended.
    private func copyToSave(_ activity: UserActivity, state: ActivityState, at time: Date, operation: String) throws -> UserActivity? {
        guard state == .current, ActivityRules.isSaved(activity, at: time) else { return nil }
        return try ActivityRules.savedCopy(of: activity, operation: operation)
    }

    private func save(_ copy: UserActivity, trigger: Activitylog_V1_SaveTrigger, at time: Date, result: inout CommandResult) throws {
        var message = Activitylog_V1_ActivitySaved()
        message.key = copy.savedKey
        message.copy = copy.proto
        message.trigger = trigger
        if let replaced = try views.saved.rawRecord(copy.savedKey, space: try space, in: txn) {
            message.replacedActivity = replaced.copy.activity
        }
        try append(.saved(message), at: time)
        result.savedKey = copy.savedKey
    }
}
