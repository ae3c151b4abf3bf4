import EventLog
import Foundation
import LMDB

/// The commands of one user space, with Apple's names, written once for the
/// two places they run: on a space handle, each command its own write
/// (``UserScoped``: `alice.becomeCurrent("a1")`), and inside a write, where
/// every command the closure runs commits together (``SpaceWriter``:
/// `alice.write { space in try space.becomeCurrent("a1") }`).
///
/// ```swift
/// try alice.createActivity(activity)                       // one write
/// try await alice.write { space in                         // one write, async
///     try space.indexSearchableItems([item])
///     try space.becomeCurrent("a1")
/// }
/// ```
///
/// `at`, when given, is the time the command's events record (else the
/// write's: the clock, read once when the write is handed over); expiry and
/// saving decisions use it.
public protocol SpaceCommands {
    /// Executes `command` in this space: on a handle, alone in a write of
    /// its own; inside a write, at once in that write's transaction.
    func execute(_ command: ActivityCommand, at time: Date?) throws -> CommandResult
}

extension SpaceCommands {
    /// Creates an inactive activity in this space. Its `user`, when set,
    /// must name this space (it is the activity's owner).
    @discardableResult
    public func createActivity(_ activity: UserActivity, at time: Date? = nil) throws -> CommandResult {
        try execute(.createActivity(activity), at: time)
    }

    /// Sets properties; saves the activity when it is current and eligible.
    @discardableResult
    public func updateActivity(_ activity: String, _ update: ActivityUpdate, at time: Date? = nil) throws -> CommandResult {
        try execute(.updateActivity(activity, update), at: time)
    }

    /// Merges entries into `userInfo` (Apple's `addUserInfoEntries(from:)`).
    @discardableResult
    public func addUserInfoEntries(_ entries: [Name: UserInfoValue], to activity: String, at time: Date? = nil) throws -> CommandResult {
        try execute(.addUserInfoEntries(activity, entries), at: time)
    }

    /// Makes the activity current on its device, superseding the one current there.
    @discardableResult
    public func becomeCurrent(_ activity: String, at time: Date? = nil) throws -> CommandResult {
        try execute(.becomeCurrent(activity), at: time)
    }

    /// Makes a current activity inactive; on an inactive one, changes nothing.
    @discardableResult
    public func resignCurrent(_ activity: String, at time: Date? = nil) throws -> CommandResult {
        try execute(.resignCurrent(activity), at: time)
    }

    /// Ends the activity for good; invalidating twice changes nothing.
    @discardableResult
    public func invalidate(_ activity: String, at time: Date? = nil) throws -> CommandResult {
        try execute(.invalidate(activity), at: time)
    }

    /// Removes this space's saved copies with these persistent identifiers;
    /// ids that match nothing are fine.
    @discardableResult
    public func deleteSavedUserActivities(withPersistentIdentifiers identifiers: [String], at time: Date? = nil) throws -> CommandResult {
        try execute(.deleteSavedUserActivities(persistentIdentifiers: identifiers), at: time)
    }

    /// Removes every saved copy of this space (what an app does when its user logs out).
    @discardableResult
    public func deleteAllSavedUserActivities(at time: Date? = nil) throws -> CommandResult {
        try execute(.deleteAllSavedUserActivities, at: time)
    }

    /// Indexes items: each replaces the item with its identifier, or (with
    /// `isUpdate`) merges into it; an update of a missing item is dropped and
    /// listed in ``CommandResult/droppedUpdates``.
    @discardableResult
    public func indexSearchableItems(_ items: [SearchableItem], at time: Date? = nil) throws -> CommandResult {
        try execute(.indexSearchableItems(items), at: time)
    }

    /// Removes the items with these identifiers; unknown ones are fine.
    @discardableResult
    public func deleteSearchableItems(withIdentifiers identifiers: [String], at time: Date? = nil) throws -> CommandResult {
        try execute(.deleteSearchableItems(identifiers: identifiers), at: time)
    }

    /// Removes the items in these domains and in every domain below them,
    /// component by component (`orders` removes `orders.2024`, not `orders2024`).
    @discardableResult
    public func deleteSearchableItems(withDomainIdentifiers domains: [String], at time: Date? = nil) throws -> CommandResult {
        try execute(.deleteSearchableItemsInDomains(domains), at: time)
    }

    /// Removes every item of this space and forgets its client states.
    @discardableResult
    public func deleteAllSearchableItems(at time: Date? = nil) throws -> CommandResult {
        try execute(.deleteAllSearchableItems, at: time)
    }

    /// Appends the removal of every item of this space expired at `now`
    /// (expiration ≤ now); nothing when none is. On the ``ActivityStore``
    /// itself, every space's: each space's removals as an event of its own.
    @discardableResult
    public func purgeExpired(now: Date, at time: Date? = nil) throws -> CommandResult {
        try execute(.purgeExpired(now: now), at: time)
    }
}
