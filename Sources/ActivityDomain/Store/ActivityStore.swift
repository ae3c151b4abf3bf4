import EventLog
import Foundation
import LMDB

/// NSUserActivity and Core Spotlight on the event log: the one type a
/// service embeds. One store serves many users; each user's data lives in
/// its own space (SPEC §9), reached through ``user(_:)`` with Apple's names.
///
/// ```swift
/// let store = try ActivityStore(path: "/var/lib/app/activities")
/// try store.declareActivityTypes(["com.companyName.productName.activityName01"])   // store-wide
/// let alice = store.user("alice")
/// var activity = UserActivity(activity: "a1", activityType: "com.companyName.productName.activityName01", device: "phone")
/// activity.title = "Current Activity"
/// try alice.createActivity(activity)
/// try alice.becomeCurrent("a1")
/// try alice.indexSearchableItems([item])
/// let offers = try alice.handoffCandidates(device: "laptop", now: Date())
/// try alice.deleteAllSearchableItems()              // alice's items only
/// ```
///
/// The store itself acts in the default space `""` (every method of
/// ``UserScoped``), except ``UserScoped/purgeExpired(now:at:)``, which on
/// the store purges every space.
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
///
/// ``close()`` ends it (commands in flight finish; every later call throws
/// `EventLogError.storeClosed`); in a service it is a swift-service-lifecycle
/// `Service` that closes on graceful shutdown (`Docs/Services.md`).
public final class ActivityStore: UserScoped {
    /// The engine underneath, for reading the log (`events(from:)`, `verify()`).
    public let eventStore: EventStore<ActivityViews>
    public let options: ActivityStoreOptions
    /// Search latency (``ActivityMetrics``); the engine's metrics are `eventStore.metrics`.
    let metrics: ActivityMetrics

    /// The projections, for reads inside `eventStore.read { txn in … }`.
    public var views: ActivityViews { eventStore.views }

    /// The keyword index, for reads inside ``EventLog/EventStore/readIndex(after:timeout:_:)``
    /// (``UserScoped/search(_:now:limit:after:timeout:)`` and
    /// ``UserScoped/query(_:now:after:timeout:)`` are the usual ones).
    public var indexViews: ActivityIndex {
        guard let index = eventStore.index else {
            preconditionFailure("the store has no index environment (opened read-only before it was ever built): check indexStatus()")
        }
        return index.views
    }

    public var store: ActivityStore { self }
    /// nil: the default space, and every space for `purgeExpired`.
    public var scope: String? { nil }

    /// Opens (or creates) the store in directory `path` and brings its views
    /// up to date with the log; with `options.store.readOnly`, opens an
    /// existing store to read and touches nothing (a read of views that lag
    /// the log throws `viewsStale` saying how far behind they are).
    public init(path: String, options: ActivityStoreOptions = ActivityStoreOptions()) throws {
        eventStore = try EventStore<ActivityViews>(path: path, options: options.store)
        self.options = options
        metrics = ActivityMetrics(path: path)
    }

    /// The handle of `user`'s space: the same commands and reads, acting on
    /// that user's data alone. Creating a handle writes nothing; a user's
    /// space comes into being with its first event.
    public func user(_ user: String) -> UserSpace {
        UserSpace(store: self, user: user)
    }

    // MARK: Commands

    /// Writes `commands` in order in one transaction, each in its own user
    /// space: all of them, or (when one is rejected) none. Each sees the
    /// effects of those before it. A rejected command's
    /// ``ActivityError/commandIndex`` says which it was. Commands without a
    /// time of their own take `time`, else the write's (``EventLog/LogBatch/time``:
    /// the clock, read once when the write is handed over). On a retry of a
    /// write with the same idempotency key, nothing runs and the result is empty.
    @discardableResult
    public func write(_ commands: [ActivityCommand.Timed], at time: Date? = nil,
                      options: WriteOptions = WriteOptions()) throws -> [CommandResult] {
        try Self.checkTransaction(commands)
        let views = self.views
        return Self.results(of: try eventStore.write(Self.options(options, at: time)) { batch in
            try ActivityCommandExecutor.execute(commands, views: views, in: batch)
        })
    }

    /// `options` with the write's time `time` when given.
    static func options(_ options: WriteOptions, at time: Date?) -> WriteOptions {
        var options = options
        if let time { options.time = time }
        return options
    }

    /// The results of a committed write of commands. A forgetUser is alone
    /// in its transaction: the snapshots the write removed are its own.
    static func results(of receipt: WriteReceipt<[CommandResult]>) -> [CommandResult] {
        var results = receipt.value ?? []
        if !receipt.removedSnapshots.isEmpty, results.count == 1 { results[0].removedSnapshots = receipt.removedSnapshots }
        return results
    }

    /// What a transaction of commands must be before it runs: `forgetUser` alone.
    static func checkTransaction(_ commands: [ActivityCommand.Timed]) throws {
        if commands.count > 1, let index = commands.firstIndex(where: { $0.command == .forgetUser }) {
            var error = ActivityError(.invalidValue, operation: "forgetUser", field: "op", value: "forgetUser among \(commands.count) commands",
                                      allowed: "forgetUser alone in its transaction")
            error.commandIndex = index
            throw error
        }
    }

    /// Erases `user` (SPEC §10): in one transaction, a redaction record
    /// names every earlier event of the user's space, those events lose
    /// their payloads (the log still verifies), and the user's data leaves
    /// every view; snapshots built from those payloads are removed. What
    /// stays: the positions, types, times and digests of the user's events,
    /// and the redaction record with the user's name. Freed pages may keep
    /// old bytes until ``ActivityStore/compact(path:progress:)``.
    ///
    /// ```swift
    /// let result = try store.forgetUser("alice")
    /// result.redactedEvents   // 1204
    /// result.positions        // 90311...90311: the redaction record
    /// ```
    ///
    /// A user with no space changes nothing (`positions` nil); the default
    /// space `""` cannot be forgotten.
    @discardableResult
    public func forgetUser(_ user: String, at time: Date? = nil) throws -> CommandResult {
        try write([ActivityCommand.Timed(.forgetUser, user: user)], at: time)[0]
    }

    /// Declares activity types (Info.plist's `NSUserActivityTypes`); declaring
    /// a declared type changes nothing. Types are the app's, so they are
    /// store-wide: every user space shares them.
    @discardableResult
    public func declareActivityTypes(_ types: [String], at time: Date? = nil) throws -> CommandResult {
        try write([ActivityCommand.Timed(.declareActivityTypes(types))], at: time)[0]
    }

    // MARK: Queries

    /// The last position of the log.
    public func head() throws -> Position { try eventStore.head() }

    /// The declared activity types, sorted.
    public func declaredActivityTypes() throws -> [String] {
        try eventStore.read { try views.registry.declaredTypes(in: $0) }
    }

    /// Every user space with what it holds, by user (UTF-8 byte order); the
    /// default space `""` is listed once something happened in it. The
    /// documents are those the index holds as it is (``indexStatus()``);
    /// 0 when the store has no index yet.
    public func users() throws -> [UserSummary] {
        let summaries = { (documents: (UInt32) throws -> Int, txn: ReadTransaction) in
            try self.views.spaces.all(in: txn).map { user, space in
                UserSummary(user: user,
                            activities: try self.views.registry.count(space: space, in: txn),
                            saved: try self.views.saved.count(space: space, in: txn),
                            items: try self.views.items.count(space: space, in: txn),
                            documents: try documents(space))
            }
        }
        guard eventStore.index != nil else { return try eventStore.read { txn in try summaries({ _ in 0 }, txn) } }
        return try eventStore.readIndex { index, log in
            try summaries({ space in Int(try self.indexViews.search.index.space(space).statistics(in: index).documentCount) }, log)
        }
    }

    /// How far the keyword index lags the log (positions, and the age of
    /// the oldest event it has not applied); nil never for an activity store.
    public func indexStatus() throws -> IndexStatus? {
        try eventStore.indexStatus()
    }

    /// The size Handoff's limit applies to: the tagged JSON of SPEC §6, in UTF-8 bytes.
    public static func encodedUserInfoSize(_ userInfo: [Name: UserInfoValue]) -> Int {
        UserInfoValue.jsonObject(userInfo).serialized().utf8.count
    }
}
