import EventLog
import Foundation
import LMDB

/// One user space of a store, the way GRDB offers a database: reads in
/// `read { space in … }`, writes in `write { space in … }`, each sync and
/// async; and Apple's named calls as conveniences, each one read or one
/// write of its own. What both a ``UserSpace`` handle (`store.user("alice")`)
/// and the ``ActivityStore`` itself (the default space `""`) offer.
///
/// ```swift
/// let bob = store.user("bob")
/// try bob.createActivity(UserActivity(activity: "a1", activityType: viewOrder, device: "phone"))
/// try bob.becomeCurrent("a1")
/// try bob.currentActivity(onDevice: "phone")      // bob's a1; alice's a1 is another activity
/// let page = try await bob.read { space in (try space.currentActivities(), try space.savedActivities()) }
/// try await bob.write { space in try space.resignCurrent("a1") }
/// ```
public protocol UserScoped: SpaceQueries, SpaceCommands, Sendable {
    /// The store the space is in.
    var store: ActivityStore { get }
    /// The user space the calls act in; nil (the store itself) acts in the
    /// default space `""`, except that `purgeExpired` purges every space.
    var scope: String? { get }
}

extension UserScoped {
    /// The space's name: `""` for the default space.
    var spaceName: String { scope ?? "" }

    /// The log's last position (the same in every space): what a read
    /// waits for with `after:` to see everything written so far.
    public func head() throws -> Position { try store.head() }

    // MARK: Reading

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
    /// let (current, results) = try alice.read(after: written) { space in
    ///     (try space.currentActivities(), try space.searchDocuments("latte", now: now))
    /// }
    /// ```
    public func read<R>(after position: Position? = nil, timeout: Duration = .seconds(10),
                        _ body: (SpaceReader) throws -> R) throws -> R {
        try ActivityRules.checkUser(spaceName, operation: "read")
        if store.eventStore.index == nil && position == nil {
            // Opened read-only before any indexer ran: every read but a search still answers.
            return try withReader(body)
        }
        return try store.eventStore.readIndex(after: position, timeout: timeout) { indexTxn, logTxn in
            try body(SpaceReader(store: store, user: spaceName, txn: logTxn, indexTxn: indexTxn))
        }
    }

    /// ``read(after:timeout:_:)-(_,_,((SpaceReader)throws->R))``, off the
    /// cooperative threads (``EventLog/BlockingWork``).
    ///
    /// ```swift
    /// let page = try await alice.read { space in
    ///     (try space.currentActivities(), try space.searchDocuments("latte", now: now), space.position)
    /// }
    /// ```
    public func read<R: Sendable>(after position: Position? = nil, timeout: Duration = .seconds(10),
                                  _ body: @escaping @Sendable (SpaceReader) throws -> R) async throws -> R {
        try await BlockingWork.run { try self.read(after: position, timeout: timeout, body) }
    }

    /// One read of the log's views alone (one read transaction, not two):
    /// what each single read of ``SpaceQueries`` runs in.
    public func withReader<R>(_ body: (SpaceReader) throws -> R) throws -> R {
        try ActivityRules.checkUser(spaceName, operation: "read")
        return try store.eventStore.read { txn in try body(SpaceReader(store: store, user: spaceName, txn: txn, indexTxn: nil)) }
    }

    // MARK: Writing

    /// Runs `body` in one write: every command it executes through the
    /// ``SpaceWriter`` acts in this space, sees the effects of those before
    /// it, and commits with them, or (when `body` throws, or an index batch
    /// it began is not ended) none does. `at`: the write's time (else the
    /// clock, read once when the write is handed over).
    ///
    /// `body` runs on the store's writer thread while this one waits, and
    /// may run again when the map grows: it acts only through `space`.
    ///
    /// ```swift
    /// let superseded = try alice.write { space in
    ///     try space.createActivity(activity)
    ///     return try space.becomeCurrent(activity.activity).superseded
    /// }
    /// ```
    @discardableResult
    public func write<R>(at time: Date? = nil, _ body: (SpaceWriter) throws -> R) throws -> R {
        let views = store.views, user = scope
        let receipt = try store.eventStore.write(WriteOptions(time: time)) { batch in
            try SpaceWriter.perform(body, user: user, views: views, in: batch)
        }
        return receipt.value!   // no idempotency key: the closure ran
    }

    /// ``write(at:_:)-(_,((SpaceWriter)throws->R))``, with the task suspended
    /// (no thread held) until the write is committed or rejected: writes
    /// from many tasks meet in the store's group commit and share commits.
    @discardableResult
    public func write<R: Sendable>(at time: Date? = nil, _ body: @escaping @Sendable (SpaceWriter) throws -> R) async throws -> R {
        let views = store.views, user = scope
        let receipt = try await store.eventStore.write(WriteOptions(time: time)) { batch in
            try SpaceWriter.perform(body, user: user, views: views, in: batch)
        }
        return receipt.value!
    }

    /// Writes `commands` in order in one transaction, in this space: all of
    /// them, or (when one is rejected) none. Each sees the effects of those
    /// before it. A rejected command's ``ActivityError/commandIndex`` says
    /// which it was. On a retry of a write with the same idempotency key,
    /// nothing runs and the result is empty.
    @discardableResult
    public func write(_ commands: [ActivityCommand], at time: Date? = nil,
                      options: WriteOptions = WriteOptions()) throws -> [CommandResult] {
        try store.write(commands.map { ActivityCommand.Timed($0, user: scope) }, at: time, options: options)
    }

    /// ``write(_:at:options:)-([ActivityCommand],_,_)``, with the task
    /// suspended until the write is committed or rejected.
    @discardableResult
    public func write(_ commands: [ActivityCommand], at time: Date? = nil,
                      options: WriteOptions = WriteOptions()) async throws -> [CommandResult] {
        try await store.write(commands.map { ActivityCommand.Timed($0, user: scope) }, at: time, options: options)
    }

    /// One command, written alone: what each of Apple's named calls does
    /// on a space (``SpaceCommands``).
    public func execute(_ command: ActivityCommand, at time: Date?) throws -> CommandResult {
        try write([command], at: time)[0]
    }
}
