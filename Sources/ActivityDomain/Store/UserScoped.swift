import EventLog
import Foundation
import LMDB

/// The commands and reads of one user space, with Apple's names: what both
/// a ``UserSpace`` handle (`store.user("alice")`) and the ``ActivityStore``
/// itself (the default space `""`) offer.
///
/// ```swift
/// let bob = store.user("bob")
/// try bob.createActivity(UserActivity(activity: "a1", activityType: viewOrder, device: "phone"))
/// try bob.becomeCurrent("a1")
/// try bob.currentActivity(onDevice: "phone")      // bob's a1; alice's a1 is another activity
/// ```
public protocol UserScoped: Sendable {
    /// The store the space is in.
    var store: ActivityStore { get }
    /// The user space the calls act in; nil (the store itself) acts in the
    /// default space `""`, except that `purgeExpired` purges every space.
    var scope: String? { get }
}

extension UserScoped {
    /// The space's name: `""` for the default space.
    var spaceName: String { scope ?? "" }

    /// Runs `body` with one read transaction over the space: several reads
    /// that see the same commit (``SpaceReader``). Its searches answer from
    /// the keyword index as far as that has applied the log (it follows the
    /// log: `Docs/Semantics.md`, "What a search sees"); with `after`, a
    /// position a write returned (``CommandResult/positions``), the read
    /// first waits, up to `timeout`, until the index has applied the log
    /// through it, and throws ``EventLog/EventLogError/Code/indexBehind``
    /// when it has not. A name that no space can have (over 256 bytes, or
    /// with NUL) is an error, as it is for a write.
    ///
    /// ```swift
    /// let written = try alice.indexSearchableItems([item]).positions?.upperBound
    /// let (current, results) = try alice.reading(after: written) { space in
    ///     (try space.currentActivities(), try space.searchDocuments("latte", now: now))
    /// }
    /// ```
    public func reading<R>(after position: Position? = nil, timeout: Duration = .seconds(10),
                           _ body: (SpaceReader) throws -> R) throws -> R {
        try ActivityRules.checkUser(spaceName, operation: "read")
        if store.eventStore.index == nil && position == nil {
            // Opened read-only before any indexer ran: every read but a search still answers.
            return try store.read { txn in try body(SpaceReader(store: store, user: spaceName, txn: txn, indexTxn: nil)) }
        }
        return try store.eventStore.readIndex(after: position, timeout: timeout) { indexTxn, logTxn in
            try body(SpaceReader(store: store, user: spaceName, txn: logTxn, indexTxn: indexTxn))
        }
    }

    /// One read of the log's views alone: what each single read that does
    /// not search runs in (one read transaction, not two).
    func readingLog<R>(_ body: (SpaceReader) throws -> R) throws -> R {
        try ActivityRules.checkUser(spaceName, operation: "read")
        return try store.read { txn in try body(SpaceReader(store: store, user: spaceName, txn: txn, indexTxn: nil)) }
    }

    /// The log's last position (the same in every space): what a read
    /// waits for with `after:` to see everything written so far.
    public func head() throws -> Position { try store.head() }

    // MARK: Commands

    /// Writes `commands` in order in one transaction, in this space: all of
    /// them, or (when one is rejected) none. Each sees the effects of those
    /// before it. A rejected command's ``ActivityError/commandIndex`` says
    /// which it was. On a retry of a write with the same idempotency key,
    /// nothing runs and the result is empty.
    @discardableResult
    public func write(_ commands: [ActivityCommand], at time: Date? = nil,
                      options writeOptions: WriteOptions = WriteOptions()) throws -> [CommandResult] {
        try store.write(inSpace(commands), at: time, options: writeOptions)
    }

    /// `commands`, each acting in this space.
    func inSpace(_ commands: [ActivityCommand]) -> [ActivityCommand.Timed] {
        commands.map { ActivityCommand.Timed($0, user: scope) }
    }

    /// One command, written alone: what each of Apple's named calls does.
    func writeOne(_ command: ActivityCommand, at time: Date?) throws -> CommandResult {
        try write([command], at: time)[0]
    }

    /// Creates an inactive activity in this space. Its `user`, when set,
    /// must name this space (it is the activity's owner).
    @discardableResult
    public func createActivity(_ activity: UserActivity, at time: Date? = nil) throws -> CommandResult {
        try writeOne(.createActivity(activity), at: time)
    }

    /// Sets properties; saves the activity when it is current and eligible.
    @discardableResult
    public func updateActivity(_ activity: String, _ update: ActivityUpdate, at time: Date? = nil) throws -> CommandResult {
        try writeOne(.updateActivity(activity, update), at: time)
    }

    /// Merges entries into `userInfo` (Apple's `addUserInfoEntries(from:)`).
    @discardableResult
    public func addUserInfoEntries(_ entries: [Name: UserInfoValue], to activity: String, at time: Date? = nil) throws -> CommandResult {
        try writeOne(.addUserInfoEntries(activity, entries), at: time)
    }

    /// Makes the activity current on its device, superseding the one current there.
    @discardableResult
    public func becomeCurrent(_ activity: String, at time: Date? = nil) throws -> CommandResult {
        try writeOne(.becomeCurrent(activity), at: time)
    }

    /// Makes a current activity inactive; on an inactive one, changes nothing.
    @discardableResult
    public func resignCurrent(_ activity: String, at time: Date? = nil) throws -> CommandResult {
        try writeOne(.resignCurrent(activity), at: time)
    }

    /// Ends the activity for good; invalidating twice changes nothing.
    @discardableResult
    public func invalidate(_ activity: String, at time: Date? = nil) throws -> CommandResult {
        try writeOne(.invalidate(activity), at: time)
    }

    /// Removes this space's saved copies with these persistent identifiers;
    /// ids that match nothing are fine.
    @discardableResult
    public func deleteSavedUserActivities(withPersistentIdentifiers identifiers: [String], at time: Date? = nil) throws -> CommandResult {
        try writeOne(.deleteSavedUserActivities(persistentIdentifiers: identifiers), at: time)
    }

    /// Removes every saved copy of this space (what an app does when its user logs out).
    @discardableResult
    public func deleteAllSavedUserActivities(at time: Date? = nil) throws -> CommandResult {
        try writeOne(.deleteAllSavedUserActivities, at: time)
    }

    // MARK: Queries (each in a read transaction of its own; ``reading(_:)`` shares one)

    /// The activity with this id, in any state.
    public func activity(_ id: String) throws -> ActivityRecord? {
        try readingLog { try $0.activity(id) }
    }

    /// Every activity of the space, by id.
    public func activities() throws -> [ActivityRecord] {
        try readingLog { try $0.activities() }
    }

    /// The activity current on the space's `device`, or nil.
    public func currentActivity(onDevice device: String) throws -> CurrentActivity? {
        try readingLog { try $0.currentActivity(onDevice: device) }
    }

    /// Every current activity of the space, by device.
    public func currentActivities() throws -> [CurrentActivity] {
        try readingLog { try $0.currentActivities() }
    }

    /// Every saved copy of the space, by key.
    public func savedActivities() throws -> [SavedActivity] {
        try readingLog { try $0.savedActivities() }
    }

    /// The copy saved under `key` (a persistentIdentifier, or an activity id).
    public func savedActivity(forKey key: String) throws -> SavedActivity? {
        try readingLog { try $0.savedActivity(forKey: key) }
    }

    /// The saved copies with this targetContentIdentifier, most recently saved first.
    public func savedActivities(withTargetContentIdentifier identifier: String) throws -> [SavedActivity] {
        try readingLog { try $0.savedActivities(withTargetContentIdentifier: identifier) }
    }

    /// The saved copies with this webpageURL, most recently saved first.
    public func savedActivities(withWebpageURL url: URL) throws -> [SavedActivity] {
        try readingLog { try $0.savedActivities(withWebpageURL: url) }
    }

    /// What Handoff offers this space's user on `device` at `now`: the
    /// activities current on the user's other devices that are eligible for
    /// handoff, not expired at `now`, and whose encoded `userInfo` fits
    /// ``ActivityStoreOptions/handoffUserInfoLimit``; the most recently made
    /// current first. It walks the user's own devices only (one key range).
    public func handoffCandidates(device: String, now: Date) throws -> [CurrentActivity] {
        try readingLog { try $0.handoffCandidates(device: device, now: now) }
    }

    /// Resolves a persistentIdentifier (or saved key), targetContentIdentifier
    /// or webpageURL of this space: the saved activity, or when it is gone,
    /// the position and operation that removed it, so that a link never
    /// fails silently.
    public func resolve(_ identifier: String) throws -> SavedActivityResolution {
        try readingLog { try $0.resolve(identifier) }
    }

    /// Siri's "suggest returning to this screen": the space's saved copies
    /// that are eligible for prediction and not expired at `now`, most often
    /// and most recently made current first (``Suggestion/score``), then by
    /// key; at most `limit`.
    public func suggestions(now: Date, limit: Int = 10) throws -> [Suggestion] {
        try readingLog { try $0.suggestions(now: now, limit: limit) }
    }
}
