import EventLog
import Foundation
import LMDB

/// NSUserActivity on the event log: the one type a service embeds.
///
/// ```swift
/// let store = try ActivityStore(path: "/var/lib/app/activities")
/// try store.declareActivityTypes(["com.companyName.productName.activityName01"])
/// var activity = UserActivity(activity: "a1", activityType: "com.companyName.productName.activityName01",
///                             device: "phone", user: "u1")
/// activity.title = "Current Activity"
/// activity.userInfo = ["informationKey": "value"]
/// try store.createActivity(activity)
/// try store.becomeCurrent("a1")
/// let offers = try store.handoffCandidates(user: "u1", device: "laptop", now: Date())
/// ```
///
/// Every command is validated against the store's state, turned into events
/// and appended with the projections' updates in one LMDB transaction; a
/// rejected command throws ``ActivityError`` and writes nothing. Each takes
/// an optional `at`, the time its events record (else the clock of
/// ``ActivityStoreOptions/store``); expiry decisions use that time.
///
/// Thread-safe, and usable from async code: every call is synchronous and
/// short, and no transaction outlives the call, so none is ever held across
/// an `await`. Writes from many threads share commits (group commit).
/// Queries read one consistent snapshot each.
public final class ActivityStore: Sendable {
    /// The engine underneath, for reading the log (`events(from:)`, `verify()`).
    public let eventStore: EventStore<ActivityViews>
    public let options: ActivityStoreOptions

    /// The projections, for reads inside ``read(_:)``.
    public var views: ActivityViews { eventStore.views }

    /// Opens (or creates) the store in directory `path` and brings its views
    /// up to date with the log.
    public init(path: String, options: ActivityStoreOptions = ActivityStoreOptions()) throws {
        eventStore = try EventStore<ActivityViews>(path: path, options: options.store)
        self.options = options
    }

    // MARK: Commands

    /// Applies `commands` in order in one transaction: all of them, or
    /// (when one is rejected) none. Each sees the effects of those before it.
    /// A rejected command's ``ActivityError/commandIndex`` says which it was.
    /// On a retry of a write with the same idempotency key, nothing runs and
    /// the result is empty.
    @discardableResult
    public func perform(_ commands: [ActivityCommand], at time: Date? = nil,
                        options writeOptions: WriteOptions = WriteOptions()) throws -> [CommandResult] {
        try perform(commands.map { ActivityCommand.Timed($0) }, at: time, options: writeOptions)
    }

    /// As ``perform(_:at:options:)``, each command with its own time
    /// (`"at"` of a JSON line); those without one get `time`, else the clock.
    @discardableResult
    public func perform(_ commands: [ActivityCommand.Timed], at time: Date? = nil,
                        options writeOptions: WriteOptions = WriteOptions()) throws -> [CommandResult] {
        // Read the clock once, outside the transaction: the write's closure
        // may run again (when the map grows) and must decide the same way.
        let batchTime = time ?? options.store.clock()
        // Tokenize the items to index on another core while the writer runs
        // (it takes what is ready and tokenizes the rest itself).
        let preparation = options.preparesSearchDocuments ? views.search.prepareAlongside(commands) : nil
        defer { preparation?.finish() }
        let receipt = try eventStore.write(writeOptions) { batch in
            let executor = ActivityCommandExecutor(views: views, batch: batch)
            var results: [CommandResult] = []
            for (index, timed) in commands.enumerated() {
                do {
                    results.append(try executor.execute(timed.command, at: timed.at ?? batchTime))
                } catch var error as ActivityError {
                    if commands.count > 1 { error.commandIndex = index }
                    throw error
                }
            }
            // An index batch begun and not ended rejects the whole perform.
            try executor.finish()
            return results
        }
        return receipt.value ?? []
    }

    private func one(_ command: ActivityCommand, at time: Date?) throws -> CommandResult {
        try perform([command], at: time)[0]
    }

    /// Declares activity types (Info.plist's `NSUserActivityTypes`); declaring
    /// a declared type changes nothing.
    @discardableResult
    public func declareActivityTypes(_ types: [String], at time: Date? = nil) throws -> CommandResult {
        try one(.declareActivityTypes(types), at: time)
    }

    /// Creates an inactive activity.
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

    /// Removes the saved copies with these persistent identifiers; ids that
    /// match nothing are fine.
    @discardableResult
    public func deleteSavedUserActivities(withPersistentIdentifiers identifiers: [String], at time: Date? = nil) throws -> CommandResult {
        try one(.deleteSavedUserActivities(persistentIdentifiers: identifiers), at: time)
    }

    /// Removes every saved copy.
    @discardableResult
    public func deleteAllSavedUserActivities(at time: Date? = nil) throws -> CommandResult {
        try one(.deleteAllSavedUserActivities, at: time)
    }

    // MARK: Queries

    /// Runs `body` in one read transaction, for several reads of ``views`` that must agree.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try eventStore.read(body)
    }

    /// The last position of the log.
    public func head() throws -> Position { try eventStore.head() }

    /// The activity with this id, in any state.
    public func activity(_ id: String) throws -> ActivityRecord? {
        try read { try views.registry.record(id, in: $0) }
    }

    /// Every activity, by id.
    public func activities() throws -> [ActivityRecord] {
        try read { try views.registry.allRecords(in: $0) }
    }

    /// The declared activity types, sorted.
    public func declaredActivityTypes() throws -> [String] {
        try read { try views.registry.declaredTypes(in: $0) }
    }

    /// The activity current on `device`, or nil.
    public func currentActivity(onDevice device: String) throws -> CurrentActivity? {
        try read { try views.current.activity(onDevice: device, registry: views.registry, in: $0) }
    }

    /// Every current activity, by device.
    public func currentActivities() throws -> [CurrentActivity] {
        try read { try views.current.all(registry: views.registry, in: $0) }
    }

    /// Every saved copy, by key.
    public func savedActivities() throws -> [SavedActivity] {
        try read { try views.saved.all(in: $0) }
    }

    /// The copy saved under `key` (a persistentIdentifier, or an activity id).
    public func savedActivity(forKey key: String) throws -> SavedActivity? {
        try read { try views.saved.activity(forKey: key, in: $0) }
    }

    /// The saved copies with this targetContentIdentifier, most recently saved first.
    public func savedActivities(withTargetContentIdentifier identifier: String) throws -> [SavedActivity] {
        try read { try views.saved.activities(withTargetContentIdentifier: identifier, in: $0) }
    }

    /// The saved copies with this webpageURL, most recently saved first.
    public func savedActivities(withWebpageURL url: URL) throws -> [SavedActivity] {
        try read { try views.saved.activities(withWebpageURL: url.absoluteString, in: $0) }
    }

    /// What Handoff offers `user` on `device` at `now`: the activities current
    /// on the user's other devices that are eligible for handoff, not expired
    /// at `now`, and whose encoded `userInfo` fits
    /// ``ActivityStoreOptions/handoffUserInfoLimit``; the most recently made
    /// current first.
    public func handoffCandidates(user: String, device: String, now: Date) throws -> [CurrentActivity] {
        let limit = options.handoffUserInfoLimit
        return try currentActivities()
            .filter { current in
                current.device != device && current.activity.user == user && current.activity.eligibleForHandoff
                    && !current.activity.isExpired(at: now)
                    && Self.encodedUserInfoSize(current.activity.userInfo) <= limit
            }
            .sorted { ($0.becameCurrentAt, $0.position) > ($1.becameCurrentAt, $1.position) }
    }

    /// The size Handoff's limit applies to: the tagged JSON of SPEC §6, in UTF-8 bytes.
    public static func encodedUserInfoSize(_ userInfo: [String: UserInfoValue]) -> Int {
        UserInfoValue.jsonObject(userInfo).serialized().utf8.count
    }

    /// Resolves a persistentIdentifier (or saved key), targetContentIdentifier
    /// or webpageURL: the saved activity, or when it is gone, the position
    /// and operation that removed it, so that a link never fails silently.
    public func resolve(_ identifier: String) throws -> SavedActivityResolution {
        try read { try views.saved.resolve(identifier, in: $0) }
    }
}
