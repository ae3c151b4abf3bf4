import EventLog
import Foundation
import LMDB
import TextIndex

// The calls that `read { }` and `write { }` replaced, kept for one release.
// Each does what it did; the compiler names what replaces it.

extension UserScoped {
    @available(*, deprecated, renamed: "read(after:timeout:_:)")
    public func reading<R>(after position: Position? = nil, timeout: Duration = .seconds(10),
                           _ body: (SpaceReader) throws -> R) throws -> R {
        try read(after: position, timeout: timeout, body)
    }

    @available(*, deprecated, renamed: "read(after:timeout:_:)")
    public func reading<R: Sendable>(after position: Position? = nil, timeout: Duration = .seconds(10),
                                     _ body: @escaping @Sendable (SpaceReader) throws -> R) async throws -> R {
        try await read(after: position, timeout: timeout, body)
    }

    // MARK: The async twins of the commands: `try await write { try $0.command(…) }`

    @available(*, deprecated, message: "use write { try $0.createActivity(…) }")
    @discardableResult
    public func createActivity(_ activity: UserActivity, at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.createActivity(activity) }
    }

    @available(*, deprecated, message: "use write { try $0.updateActivity(…) }")
    @discardableResult
    public func updateActivity(_ activity: String, _ update: ActivityUpdate, at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.updateActivity(activity, update) }
    }

    @available(*, deprecated, message: "use write { try $0.addUserInfoEntries(…) }")
    @discardableResult
    public func addUserInfoEntries(_ entries: [Name: UserInfoValue], to activity: String, at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.addUserInfoEntries(entries, to: activity) }
    }

    @available(*, deprecated, message: "use write { try $0.becomeCurrent(…) }")
    @discardableResult
    public func becomeCurrent(_ activity: String, at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.becomeCurrent(activity) }
    }

    @available(*, deprecated, message: "use write { try $0.resignCurrent(…) }")
    @discardableResult
    public func resignCurrent(_ activity: String, at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.resignCurrent(activity) }
    }

    @available(*, deprecated, message: "use write { try $0.invalidate(…) }")
    @discardableResult
    public func invalidate(_ activity: String, at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.invalidate(activity) }
    }

    @available(*, deprecated, message: "use write { try $0.deleteSavedUserActivities(…) }")
    @discardableResult
    public func deleteSavedUserActivities(withPersistentIdentifiers identifiers: [String], at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.deleteSavedUserActivities(withPersistentIdentifiers: identifiers) }
    }

    @available(*, deprecated, message: "use write { try $0.deleteAllSavedUserActivities() }")
    @discardableResult
    public func deleteAllSavedUserActivities(at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.deleteAllSavedUserActivities() }
    }

    @available(*, deprecated, message: "use write { try $0.indexSearchableItems(…) }")
    @discardableResult
    public func indexSearchableItems(_ items: [SearchableItem], at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.indexSearchableItems(items) }
    }

    @available(*, deprecated, message: "use write { try $0.deleteSearchableItems(withIdentifiers:) }")
    @discardableResult
    public func deleteSearchableItems(withIdentifiers identifiers: [String], at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.deleteSearchableItems(withIdentifiers: identifiers) }
    }

    @available(*, deprecated, message: "use write { try $0.deleteSearchableItems(withDomainIdentifiers:) }")
    @discardableResult
    public func deleteSearchableItems(withDomainIdentifiers domains: [String], at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.deleteSearchableItems(withDomainIdentifiers: domains) }
    }

    @available(*, deprecated, message: "use write { try $0.deleteAllSearchableItems() }")
    @discardableResult
    public func deleteAllSearchableItems(at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.deleteAllSearchableItems() }
    }

    @available(*, deprecated, message: "use write { try $0.purgeExpired(now:) }")
    @discardableResult
    public func purgeExpired(now: Date, at time: Date? = nil) async throws -> CommandResult {
        try await write(at: time) { try $0.purgeExpired(now: now) }
    }

    // MARK: The async twins of the reads: `try await read { try $0.query(…) }`

    @available(*, deprecated, message: "use read { try $0.activity(…) }")
    public func activity(_ id: String) async throws -> ActivityRecord? {
        try await read { try $0.activity(id) }
    }

    @available(*, deprecated, message: "use read { try $0.currentActivities() }")
    public func currentActivities() async throws -> [CurrentActivity] {
        try await read { try $0.currentActivities() }
    }

    @available(*, deprecated, message: "use read { try $0.savedActivities() }")
    public func savedActivities() async throws -> [SavedActivity] {
        try await read { try $0.savedActivities() }
    }

    @available(*, deprecated, message: "use read { try $0.handoffCandidates(…) }")
    public func handoffCandidates(device: String, now: Date) async throws -> [CurrentActivity] {
        try await read { try $0.handoffCandidates(device: device, now: now) }
    }

    @available(*, deprecated, message: "use read { try $0.resolve(…) }")
    public func resolve(_ identifier: String) async throws -> SavedActivityResolution {
        try await read { try $0.resolve(identifier) }
    }

    @available(*, deprecated, message: "use read { try $0.suggestions(…) }")
    public func suggestions(now: Date, limit: Int = 10) async throws -> [Suggestion] {
        try await read { try $0.suggestions(now: now, limit: limit) }
    }

    @available(*, deprecated, message: "use read { try $0.fetchLastClientState(…) }")
    public func fetchLastClientState(index: String) async throws -> Data? {
        try await read { try $0.fetchLastClientState(index: index) }
    }

    @available(*, deprecated, message: "use read { try $0.items() }")
    public func items() async throws -> [IndexedItem] {
        try await read { try $0.items() }
    }

    @available(*, deprecated, message: "use read { try $0.items(withIdentifiers:) }")
    public func items(withIdentifiers identifiers: [String]) async throws -> [IndexedItem] {
        try await read { try $0.items(withIdentifiers: identifiers) }
    }

    @available(*, deprecated, message: "use read(after:timeout:) { try $0.search(…) }")
    public func search(_ text: String, now: Date, limit: Int = 20, after position: Position? = nil,
                       timeout: Duration = .seconds(10)) async throws -> [SearchHit] {
        try await read(after: position, timeout: timeout) { try $0.search(text, now: now, limit: limit) }
    }

    @available(*, deprecated, message: "use read(after:timeout:) { try $0.query(…) }")
    public func query(_ expression: String, now: Date, after position: Position? = nil,
                      timeout: Duration = .seconds(10)) async throws -> [SearchHit] {
        try await read(after: position, timeout: timeout) { try $0.query(expression, now: now) }
    }

    @available(*, deprecated, message: "use read(after:timeout:) { try $0.searchDocuments(…) }")
    public func searchDocuments(_ text: String, now: Date, limit: Int = 20, after position: Position? = nil,
                                timeout: Duration = .seconds(10)) async throws -> [SearchResult] {
        try await read(after: position, timeout: timeout) { try $0.searchDocuments(text, now: now, limit: limit) }
    }

    @available(*, deprecated, message: "use read(after:timeout:) { try $0.queryDocuments(…) }")
    public func queryDocuments(_ expression: String, now: Date, after position: Position? = nil,
                               timeout: Duration = .seconds(10)) async throws -> [SearchResult] {
        try await read(after: position, timeout: timeout) { try $0.queryDocuments(expression, now: now) }
    }
}

extension ActivityStore {
    @available(*, deprecated, message: "use eventStore.read { txn in … } (a transaction of the views), or read { space in … } (a space's reads)")
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try eventStore.read(body)
    }

    @available(*, deprecated, message: "use eventStore.read { txn in … } (a transaction of the views), or read { space in … } (a space's reads)")
    public func read<R: Sendable>(_ body: @escaping @Sendable (ReadTransaction) throws -> R) async throws -> R {
        try await eventStore.read(body)
    }
}
