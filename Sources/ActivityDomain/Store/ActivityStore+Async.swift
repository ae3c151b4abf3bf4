import EventLog
import Foundation
import LMDB
import TextIndex

/// The async face of ``ActivityStore`` and of a user's handle
/// (``ActivityStore/user(_:)``), for services written with Swift
/// concurrency. A command is queued in the store's group commit and the task
/// is suspended until the writer thread has committed it (as GRDB's async
/// `write` does): no thread waits for its fsync, so commands from any
/// number of tasks meet in the queue and share commits. A read runs its
/// synchronous twin on the engine's blocking queue (``EventLog/BlockingWork``),
/// off the cooperative threads. A write, once submitted, is not cancelled:
/// it commits or throws.
///
/// ```swift
/// let alice = store.user("alice")
/// try await alice.createActivity(activity)
/// try await alice.becomeCurrent("a1")
/// let hits = try await alice.search("coffee", now: Date())
/// let n = try await alice.reading { try $0.savedActivities().count }   // reads in one transaction, off the cooperative threads
/// ```
extension UserScoped {
    // MARK: Commands

    @discardableResult
    public func write(_ commands: [ActivityCommand], at time: Date? = nil,
                      options writeOptions: WriteOptions = WriteOptions()) async throws -> [CommandResult] {
        try await store.write(inSpace(commands), at: time, options: writeOptions)
    }

    func writeOne(_ command: ActivityCommand, at time: Date?) async throws -> CommandResult {
        try await write([command], at: time)[0]
    }

    @discardableResult
    public func createActivity(_ activity: UserActivity, at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.createActivity(activity), at: time)
    }

    @discardableResult
    public func updateActivity(_ activity: String, _ update: ActivityUpdate, at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.updateActivity(activity, update), at: time)
    }

    @discardableResult
    public func addUserInfoEntries(_ entries: [Name: UserInfoValue], to activity: String, at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.addUserInfoEntries(activity, entries), at: time)
    }

    @discardableResult
    public func becomeCurrent(_ activity: String, at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.becomeCurrent(activity), at: time)
    }

    @discardableResult
    public func resignCurrent(_ activity: String, at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.resignCurrent(activity), at: time)
    }

    @discardableResult
    public func invalidate(_ activity: String, at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.invalidate(activity), at: time)
    }

    @discardableResult
    public func deleteSavedUserActivities(withPersistentIdentifiers identifiers: [String], at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.deleteSavedUserActivities(persistentIdentifiers: identifiers), at: time)
    }

    @discardableResult
    public func deleteAllSavedUserActivities(at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.deleteAllSavedUserActivities, at: time)
    }

    @discardableResult
    public func indexSearchableItems(_ items: [SearchableItem], at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.indexSearchableItems(items), at: time)
    }

    @discardableResult
    public func deleteSearchableItems(withIdentifiers identifiers: [String], at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.deleteSearchableItems(identifiers: identifiers), at: time)
    }

    @discardableResult
    public func deleteSearchableItems(withDomainIdentifiers domains: [String], at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.deleteSearchableItemsInDomains(domains), at: time)
    }

    @discardableResult
    public func deleteAllSearchableItems(at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.deleteAllSearchableItems, at: time)
    }

    @discardableResult
    public func purgeExpired(now: Date, at time: Date? = nil) async throws -> CommandResult {
        try await writeOne(.purgeExpired(now: now), at: time)
    }

    // MARK: Reads

    /// Several reads of this space in one read transaction
    /// (``reading(after:timeout:_:)-(_,_,((SpaceReader)throws->R))``), off the cooperative threads.
    ///
    /// ```swift
    /// let page = try await alice.reading { space in
    ///     (try space.currentActivities(), try space.searchDocuments("latte", now: now), space.position)
    /// }
    /// ```
    public func reading<R: Sendable>(after position: Position? = nil, timeout: Duration = .seconds(10),
                                     _ body: @escaping @Sendable (SpaceReader) throws -> R) async throws -> R {
        try await BlockingWork.run { try self.reading(after: position, timeout: timeout, body) }
    }

    public func activity(_ id: String) async throws -> ActivityRecord? {
        try await BlockingWork.run { try self.activity(id) }
    }

    public func currentActivities() async throws -> [CurrentActivity] {
        try await BlockingWork.run { try self.currentActivities() }
    }

    public func savedActivities() async throws -> [SavedActivity] {
        try await BlockingWork.run { try self.savedActivities() }
    }

    public func handoffCandidates(device: String, now: Date) async throws -> [CurrentActivity] {
        try await BlockingWork.run { try self.handoffCandidates(device: device, now: now) }
    }

    public func resolve(_ identifier: String) async throws -> SavedActivityResolution {
        try await BlockingWork.run { try self.resolve(identifier) }
    }

    public func suggestions(now: Date, limit: Int = 10) async throws -> [Suggestion] {
        try await BlockingWork.run { try self.suggestions(now: now, limit: limit) }
    }

    public func fetchLastClientState(index: String) async throws -> Data? {
        try await BlockingWork.run { try self.fetchLastClientState(index: index) }
    }

    public func items() async throws -> [IndexedItem] {
        try await BlockingWork.run { try self.items() }
    }

    public func search(_ text: String, now: Date, limit: Int = 20, after position: Position? = nil,
                       timeout: Duration = .seconds(10)) async throws -> [SearchHit] {
        try await BlockingWork.run { try self.search(text, now: now, limit: limit, after: position, timeout: timeout) }
    }

    public func query(_ expression: String, now: Date, after position: Position? = nil,
                      timeout: Duration = .seconds(10)) async throws -> [SearchHit] {
        try await BlockingWork.run { try self.query(expression, now: now, after: position, timeout: timeout) }
    }

    public func searchDocuments(_ text: String, now: Date, limit: Int = 20, after position: Position? = nil,
                                timeout: Duration = .seconds(10)) async throws -> [SearchResult] {
        try await BlockingWork.run { try self.searchDocuments(text, now: now, limit: limit, after: position, timeout: timeout) }
    }

    public func queryDocuments(_ expression: String, now: Date, after position: Position? = nil,
                               timeout: Duration = .seconds(10)) async throws -> [SearchResult] {
        try await BlockingWork.run { try self.queryDocuments(expression, now: now, after: position, timeout: timeout) }
    }

    public func items(withIdentifiers identifiers: [String]) async throws -> [IndexedItem] {
        try await BlockingWork.run { try self.items(withIdentifiers: identifiers) }
    }
}

extension ActivityStore {
    /// ``write(_:at:options:)-([ActivityCommand.Timed],_,_)``, with the task
    /// suspended (no thread held) until the write is committed or rejected.
    @discardableResult
    public func write(_ commands: [ActivityCommand.Timed], at time: Date? = nil,
                      options writeOptions: WriteOptions = WriteOptions()) async throws -> [CommandResult] {
        let writeOptions = try prepareWrite(commands, at: time, options: writeOptions)
        let views = self.views
        let receipt = try await eventStore.write(writeOptions) { batch in
            try Self.execute(commands, views: views, in: batch)
        }
        return Self.results(of: receipt)
    }

    @discardableResult
    public func declareActivityTypes(_ types: [String], at time: Date? = nil) async throws -> CommandResult {
        try await write([ActivityCommand.Timed(.declareActivityTypes(types))], at: time)[0]
    }

    public func read<R: Sendable>(_ body: @escaping @Sendable (ReadTransaction) throws -> R) async throws -> R {
        try await BlockingWork.run { try self.read(body) }
    }

    public func users() async throws -> [UserSummary] {
        try await BlockingWork.run { try self.users() }
    }
}
