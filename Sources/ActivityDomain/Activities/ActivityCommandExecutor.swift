import EventLog
import Foundation
import LMDB

/// Executes commands inside the engine's write path: validates each against
/// the state the projections hold (including events this write already
/// appended), turns it into events and appends them, so that the
/// projections apply them in the same transaction. Core Spotlight's
/// commands are in `ActivityCommandExecutor+Spotlight.swift`, `forgetUser`
/// in `ActivityCommandExecutor+Forget.swift`.
///
/// ```swift
/// let results = try ActivityCommandExecutor.execute(commands, views: views, in: batch)   // the body of a write
/// ```
///
/// Every command acts in one user space: it reads that space's views only
/// and its events carry the space (`user`). The space is looked up once,
/// when the command starts, and handed to each step with the command's time
/// (``CommandScope``). Every check comes before the first append of a
/// command; a command that throws has appended nothing, and the store's
/// write aborts the whole transaction anyway.
final class ActivityCommandExecutor {
    let views: ActivityViews
    let batch: LogBatch
    /// The index batches begun in this write and not ended yet: index →
    /// (first position of the batch, the begin command's place).
    var openBatches: [IndexBatchKey: (firstPosition: Position, commandIndex: Int)] = [:]
    /// How many commands ran before the next one.
    private var executed = 0

    init(views: ActivityViews, batch: LogBatch) {
        self.views = views
        self.batch = batch
    }

    var txn: WriteTransaction { batch.transaction }

    /// The body of every write of commands: executes `commands` in order in
    /// `batch`, each in its own space; then rejects an index batch begun and
    /// not ended. A rejected command's error names its place when there are
    /// several (``ActivityError/commandIndex``).
    static func execute(_ commands: [ActivityCommand.Timed], views: ActivityViews, in batch: LogBatch) throws -> [CommandResult] {
        let executor = ActivityCommandExecutor(views: views, batch: batch)
        var results: [CommandResult] = []
        results.reserveCapacity(commands.count)
        for (index, timed) in commands.enumerated() {
            do {
                results.append(try executor.execute(timed.command, user: timed.user, at: timed.at))
            } catch var error as ActivityError {
                if commands.count > 1 { error.commandIndex = index }
                throw error
            }
        }
        try executor.finish()
        return results
    }

    /// Executes `command` in `user`'s space (nil: the default space, or, for
    /// `purgeExpired`, every space); its events record `time`, else the
    /// write's (``EventLog/LogBatch/time``).
    func execute(_ command: ActivityCommand, user: String?, at time: Date?) throws -> CommandResult {
        if let user { try ActivityRules.checkUser(user, operation: command.operation) }
        let name = user ?? ""
        var scope = CommandScope(user: name, space: try views.spaces.lookupID(of: name, in: txn), time: time ?? batch.time,
                                 index: executed, result: CommandResult(operation: command.operation))
        executed += 1
        let before = batch.head
        switch command {
        case .declareActivityTypes(let types): try declare(types, &scope)
        case .createActivity(let activity): try create(activity, &scope)
        case .updateActivity(let id, let update): try self.update(id, update, &scope)
        case .addUserInfoEntries(let id, let entries): try addEntries(entries, to: id, &scope)
        case .becomeCurrent(let id): try becomeCurrent(id, &scope)
        case .resignCurrent(let id): try resignCurrent(id, &scope)
        case .invalidate(let id): try invalidate(id, &scope)
        case .deleteSavedUserActivities(let ids): try deleteSaved(ids, &scope)
        case .deleteAllSavedUserActivities: try deleteAllSaved(&scope)
        case .forgetUser: try forget(&scope)
        case .indexSearchableItems(let items): try index(items, &scope)
        case .deleteSearchableItems(let ids): try deleteItems(ids, &scope)
        case .deleteSearchableItemsInDomains(let domains): try deleteItems(inDomains: domains, &scope)
        case .deleteAllSearchableItems: try deleteAllItems(&scope)
        case .purgeExpired(let now): try purgeExpired(now: now, onlyUser: user, &scope)
        case .beginIndexBatch(let index): try beginIndexBatch(index, &scope)
        case .endIndexBatch(let index, let state, let expected): try endIndexBatch(index, clientState: state, expected: expected, &scope)
        }
        if batch.head > before { scope.result.positions = (before + 1)...batch.head }
        return scope.result
    }

    /// Appends `event` in the command's space at its time.
    @discardableResult
    private func append(_ event: ActivityEvent, _ scope: inout CommandScope) throws -> RecordedEvent {
        let recorded = try batch.append(event.newEvent(user: scope.user, at: scope.time))
        scope.result.eventTypes.append(recorded.type)
        return recorded
    }

    // MARK: Commands

    private func declare(_ types: [String], _ scope: inout CommandScope) throws {
        let operation = "declareActivityTypes"
        for type in types { try ActivityRules.checkActivityTypeSyntax(type, operation: operation, field: "types") }
        var new: [String] = []
        for type in Set(types.map { Name($0) }).sorted() {
            if try !views.registry.isDeclared(type.string, in: txn) { new.append(type.string) }
        }
        guard !new.isEmpty else { return }
        var message = Activitylog_V1_ActivityTypesDeclared()
        message.types = new
        try append(.typesDeclared(message), &scope)
    }

    private func create(_ given: UserActivity, _ scope: inout CommandScope) throws {
        let operation = "createActivity"
        var activity = given.normalized
        // The activity's `user` is its owner, the space it lives in: it
        // must name the command's space, or be left to it.
        let user = scope.user
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
        guard try views.registry.rawRecord(activity.activity, space: scope.space, in: txn) == nil else {
            throw ActivityError(.activityAlreadyExists, operation: operation, field: "activity", value: activity.activity,
                                allowed: "an id no activity of this user space has (invalidated ones included)")
        }
        var message = Activitylog_V1_ActivityCreated()
        message.activity = activity.proto
        try append(.created(message), &scope)
    }

    /// The record of a live activity, or the error SPEC §8 names.
    private func liveRecord(_ id: String, operation: String, _ scope: CommandScope) throws -> ActivityRecord {
        try ActivityRules.checkIdentifier(id, field: "activity", operation: operation)
        guard let record = try views.registry.record(id, space: scope.space, in: txn) else {
            throw ActivityError(.unknownActivity, operation: operation, field: "activity", value: id,
                                allowed: "the id of an activity created in this user space")
        }
        guard record.state != .invalidated else {
            throw ActivityError(.activityInvalidated, operation: operation, field: "activity", value: id,
                                allowed: "only invalidate on an invalidated activity")
        }
        return record
    }

    private func update(_ id: String, _ update: ActivityUpdate, _ scope: inout CommandScope) throws {
        let operation = "updateActivity"
        let record = try liveRecord(id, operation: operation, scope)
        let (activity, changed) = update.applied(to: record.activity)
        try ActivityRules.checkProperties(of: activity, operation: operation)
        guard !changed.isEmpty else { return }
        let copy = try copyToSave(activity, state: record.state, at: scope.time, operation: operation)
        var message = Activitylog_V1_ActivityUpdated()
        message.activity = activity.proto
        message.changedProperties = changed
        try append(.updated(message), &scope)
        if let copy { try save(copy, trigger: .updatedWhileCurrent, &scope) }
    }

    private func addEntries(_ given: [Name: UserInfoValue], to id: String, _ scope: inout CommandScope) throws {
        let operation = "addUserInfoEntries"
        let record = try liveRecord(id, operation: operation, scope)
        let entries = given.mapValues(\.normalized)
        try ActivityRules.checkUserInfo(entries, path: "entries", operation: operation)
        var activity = record.activity
        activity.userInfo.merge(entries) { _, new in new }
        guard activity.userInfo != record.activity.userInfo else { return }
        let copy = try copyToSave(activity, state: record.state, at: scope.time, operation: operation)
        var message = Activitylog_V1_ActivityUserInfoEntriesAdded()
        message.activity = id
        message.entries = UserInfoValue.protoDictionary(entries)
        message.replacedKeys = entries.keys.filter { record.activity.userInfo[$0] != nil }.sorted().map(\.string)
        try append(.userInfoEntriesAdded(message), &scope)
        if let copy { try save(copy, trigger: .updatedWhileCurrent, &scope) }
    }

    private func becomeCurrent(_ id: String, _ scope: inout CommandScope) throws {
        let operation = "becomeCurrent"
        let record = try liveRecord(id, operation: operation, scope)
        guard record.state != .current else { return }
        let copy = try copyToSave(record.activity, state: .current, at: scope.time, operation: operation)
        var message = Activitylog_V1_ActivityBecameCurrent()
        message.activity = id
        message.device = record.activity.device
        if let superseded = try views.current.entry(onDevice: record.activity.device, space: scope.space, in: txn)?.activity,
           !Name.equal(superseded, id) {
            message.superseded = superseded
            scope.result.superseded = superseded
        }
        try append(.becameCurrent(message), &scope)
        if let copy { try save(copy, trigger: .becameCurrent, &scope) }
    }

    private func resignCurrent(_ id: String, _ scope: inout CommandScope) throws {
        let record = try liveRecord(id, operation: "resignCurrent", scope)
        guard record.state == .current else { return }
        var message = Activitylog_V1_ActivityResignedCurrent()
        message.activity = id
        message.device = record.activity.device
        try append(.resignedCurrent(message), &scope)
    }

    private func invalidate(_ id: String, _ scope: inout CommandScope) throws {
        let operation = "invalidate"
        try ActivityRules.checkIdentifier(id, field: "activity", operation: operation)
        guard let record = try views.registry.record(id, space: scope.space, in: txn) else {
            throw ActivityError(.unknownActivity, operation: operation, field: "activity", value: id,
                                allowed: "the id of an activity created in this user space")
        }
        guard record.state != .invalidated else { return }
        var message = Activitylog_V1_ActivityInvalidated()
        message.activity = id
        message.device = record.activity.device
        message.wasCurrent = record.state == .current
        try append(.invalidated(message), &scope)
    }

    private func deleteSaved(_ ids: [String], _ scope: inout CommandScope) throws {
        let operation = "deleteSavedUserActivities"
        for id in ids { try ActivityRules.checkIdentifier(id, field: "persistentIdentifiers", operation: operation) }
        // By bytes: identifiers that differ in one byte are two identifiers.
        let requested = Set(ids.map { Name($0) }).sorted().map(\.string)
        guard !requested.isEmpty else { return }
        var removed: [String] = []
        for id in requested {
            // Only copies saved under their persistentIdentifier match; a copy
            // keyed by its activity id has none.
            if let record = try views.saved.rawRecord(id, space: scope.space, in: txn), record.copy.hasPersistentIdentifier,
               Name.equal(record.copy.persistentIdentifier, id) {
                removed.append(id)
            }
        }
        var message = Activitylog_V1_SavedActivitiesDeleted()
        message.persistentIdentifiers = requested
        message.removedKeys = removed
        try append(.savedDeleted(message), &scope)
        scope.result.removedKeys = removed
    }

    private func deleteAllSaved(_ scope: inout CommandScope) throws {
        let keys = try views.saved.allRecords(space: scope.space, in: txn).map(\.key)
        var message = Activitylog_V1_SavedActivitiesAllDeleted()
        message.removedKeys = keys
        try append(.savedAllDeleted(message), &scope)
        scope.result.removedKeys = keys
    }

    // MARK: Saving

    /// The copy to save when an activity in `state` (after the command) is
    /// saved at `time`, or nil when it is not saved. Throws for a missing
    /// required key, before anything is appended.
    private func copyToSave(_ activity: UserActivity, state: ActivityState, at time: Date, operation: String) throws -> UserActivity? {
        guard state == .current, ActivityRules.isSaved(activity, at: time) else { return nil }
        return try ActivityRules.savedCopy(of: activity, operation: operation)
    }

    private func save(_ copy: UserActivity, trigger: Activitylog_V1_SaveTrigger, _ scope: inout CommandScope) throws {
        var message = Activitylog_V1_ActivitySaved()
        message.key = copy.savedKey
        message.copy = copy.proto
        message.trigger = trigger
        if let replaced = try views.saved.rawRecord(copy.savedKey, space: scope.space, in: txn) {
            message.replacedActivity = replaced.copy.activity
        }
        try append(.saved(message), &scope)
        scope.result.savedKey = copy.savedKey
    }
}

/// One command as it executes: the user space it acts in, its id looked up
/// once when the command starts (``SpaceDirectory/none`` while the space
/// holds nothing: every lookup with it finds nothing), the time its events
/// record, its place among the write's commands, and its result so far.
struct CommandScope {
    let user: String
    let space: UInt32
    let time: Date
    let index: Int
    var result: CommandResult
}
