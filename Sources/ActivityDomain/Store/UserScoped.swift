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
    /// that see the same commit (``SpaceReader``).
    ///
    /// ```swift
    /// let (current, results) = try alice.reading { space in
    ///     (try space.currentActivities(), try space.searchDocuments("latte", now: now))
    /// }
    /// ```
    public func reading<R>(_ body: (SpaceReader) throws -> R) throws -> R {
        try store.read { txn in try body(SpaceReader(store: store, user: spaceName, txn: txn)) }
    }

    // MARK: Commands

    /// Applies `commands` in order in one transaction, in this space: all of
    /// them, or (when one is rejected) none. Each sees the effects of those
    /// before it. A rejected command's ``ActivityError/commandIndex`` says
    /// which it was. On a retry of a write with the same idempotency key,
    /// nothing runs and the result is empty.
    @discardableResult
    public func perform(_ commands: [ActivityCommand], at time: Date? = nil,
                        options writeOptions: WriteOptions = WriteOptions()) throws -> [CommandResult] {
        try store.perform(commands.map { ActivityCommand.Timed($0, user: scope) }, at: time, options: writeOptions)
    }

    func one(_ command: ActivityCommand, at time: Date?) throws -> CommandResult {
        try perform([command], at: time)[0]
    }

    /// Creates an inactive activity in this space. Its `user`, when set,
    /// must name this space (it is the activity's owner).
    @discardableResult
    public func createActivity(_ activity: UserActivity, at time: Date? = nil) throws -> CommandResult {
        try one(.createActivity(activity), at: time)
    }

    /// Sets properties; saves the activity when it is current and eligible.
    @discardableResult
    public func updateActivity(_ activity: String, _ update: ActivityUpdate, at time: Date? = nil) throws -> CommandResult {
        try one(.updateActivity(activity, update), at: time)
    }

    /// Merges entries into `userInfo` (Apple's `addUserInfoEntries(from:)`).
    @discardableResult
    public func addUserInfoEntries(_ entries: [String: UserInfoValue], to activity: String, at time: Date? = nil) throws -> CommandResult {
        try one(.addUserInfoEntries(activity, entries), at: time)
    }

    /// Makes the activity current on its device, superseding the one current there.
    @discardableResult
    public func becomeCurrent(_ activity: String, at time: Date? = nil) throws -> CommandResult {
        try one(.becomeCurrent(activity), at: time)
    }

    /// Makes a current activity inactive; on an inactive one, changes nothing.
    @discardableResult
    public func resignCurrent(_ activity: String, at time: Date? = nil) throws -> CommandResult {
        try one(.resignCurrent(activity), at: time)
    }

    /// Ends the activity for good; invalidating twice changes nothing.
    @discardableResult
    public func invalidate(_ activity: String, at time: Date? = nil) throws -> CommandResult {
        try one(.invalidate(activity), at: time)
    }

    /// Removes this space's saved copies with these persistent identifiers;
    /// ids that match nothing are fine.
    @discardableResult
    public func deleteSavedUserActivities(withPersistentIdentifiers identifiers: [String], at time: Date? = nil) throws -> CommandResult {
        try one(.deleteSavedUserActivities(persistentIdentifiers: identifiers), at: time)
    }

    /// Removes every saved copy of this space (what an app does when its user logs out).
    @discardableResult
    public func deleteAllSavedUserActivities(at time: Date? = nil) throws -> CommandResult {
        try one(.deleteAllSavedUserActivities, at: time)
    }

    // MARK: Queries (each in a read transaction of its own; ``reading(_:)`` shares one)

    /// The activity with this id, in any state.
    public func activity(_ id: String) throws -> ActivityRecord? {
        try reading { try $0.activity(id) }
    }

    /// Every activity of the space, by id.
    public func activities() throws -> [ActivityRecord] {
        try reading { try $0.activities() }
    }

    /// The activity current on the space's `device`, or nil.
    public func currentActivity(onDevice device: String) throws -> CurrentActivity? {
        try reading { try $0.currentActivity(onDevice: device) }
    }

    /// Every current activity of the space, by device.
    public func currentActivities() throws -> [CurrentActivity] {
        try reading { try $0.currentActivities() }
    }

    /// Every saved copy of the space, by key.
    public func savedActivities() throws -> [SavedActivity] {
        try reading { try $0.savedActivities() }
    }

    /// The copy saved under `key` (a persistentIdentifier, or an activity id).
    public func savedActivity(forKey key: String) throws -> SavedActivity? {
        try reading { try $0.savedActivity(forKey: key) }
    }

    /// The saved copies with this targetContentIdentifier, most recently saved first.
    public func savedActivities(withTargetContentIdentifier identifier: String) throws -> [SavedActivity] {
        try reading { try $0.savedActivities(withTargetContentIdentifier: identifier) }
    }

    /// The saved copies with this webpageURL, most recently saved first.
    public func savedActivities(withWebpageURL url: URL) throws -> [SavedActivity] {
        try reading { try $0.savedActivities(withWebpageURL: url) }
    }

    /// What Handoff offers this space's user on `device` at `now`: the
    /// activities current on the user's other devices that are eligible for
    /// handoff, not expired at `now`, and whose encoded `userInfo` fits
    /// ``ActivityStoreOptions/handoffUserInfoLimit``; the most recently made
    /// current first. It walks the user's own devices only (one key range).
    public func handoffCandidates(device: String, now: Date) throws -> [CurrentActivity] {
        try reading { try $0.handoffCandidates(device: device, now: now) }
    }

    /// Resolves a persistentIdentifier (or saved key), targetContentIdentifier
    /// or webpageURL of this space: the saved activity, or when it is gone,
    /// the position and operation that removed it, so that a link never
    /// fails silently.
    public func resolve(_ identifier: String) throws -> SavedActivityResolution {
        try reading { try $0.resolve(identifier) }
    }

    /// Siri's "suggest returning to this screen": the space's saved copies
    /// that are eligible for prediction and not expired at `now`, most often
    /// and most recently made current first (``Suggestion/score``), then by
    /// key; at most `limit`.
    public func suggestions(now: Date, limit: Int = 10) throws -> [Suggestion] {
        try reading { try $0.suggestions(now: now, limit: limit) }
    }
}
