import LMDB

/// A view built from the log: a pure function of its own state and each
/// event, applied inside the writer's transaction.
///
/// A projection owns named databases (``databaseNames``): a rebuild empties
/// them and applies the log again, a snapshot copies them. It must not read
/// the clock, draw random numbers or depend on hash order: a rebuild must
/// reproduce its databases byte for byte. Time enters only through
/// ``RecordedEvent/appendedAt`` or an event's own fields.
///
/// ```swift
/// struct EventCount: Projection {
///     let counts: Database<String, UInt64>
///     var name: String { "eventCount" }
///     var version: UInt32 { 1 }
///     var databaseNames: [String] { ["eventCount"] }
///     init(openingIn txn: WriteTransaction) throws {
///         counts = try txn.createDatabase("eventCount")
///     }
///     func makeWriter(in txn: WriteTransaction) -> any ProjectionWriter {
///         ClosureProjectionWriter { event in
///             let n = try counts.get(event.type, in: txn) ?? 0
///             try counts.put(n + 1, forKey: event.type, in: txn)
///         }
///     }
/// }
/// ```
public protocol Projection: Sendable {
    /// Stable name; the key of its checkpoint.
    var name: String { get }
    /// Bumped whenever what the projection writes changes; a store whose
    /// checkpoint has another version rebuilds this projection on open, and
    /// snapshots of another version are ignored.
    var version: UInt32 { get }
    /// The named databases it owns, all of them.
    var databaseNames: [String] { get }
    /// A writer for one write transaction. Events of the transaction go to
    /// its ``ProjectionWriter/apply(_:)`` in order, then ``ProjectionWriter/finish()``
    /// runs once before the commit.
    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter
    /// A writer that may read earlier payloads of the log it applies, for a
    /// view that refers to bytes in the log instead of copying them (the
    /// keyword index reads a replaced document's old text there). `log`
    /// reads the log being applied: the store's own, or in a rebuild the
    /// live store's, which the scratch environment `txn` writes does not
    /// hold. What the writer reads there must be a function of the log, as
    /// everything else it writes. By default, ``makeWriter(in:)``.
    func makeWriter(in txn: WriteTransaction, log: LogReader) throws -> any ProjectionWriter
}

extension Projection {
    public func makeWriter(in txn: WriteTransaction, log: LogReader) throws -> any ProjectionWriter {
        try makeWriter(in: txn)
    }
}

/// Applies the events of one transaction to one projection. It may keep
/// state in memory across the events (to write each key once) as long as
/// ``finish()`` writes it.
public protocol ProjectionWriter: AnyObject {
    func apply(_ event: RecordedEvent) throws
    func finish() throws
}

extension ProjectionWriter {
    public func finish() throws {}
}

/// A ``ProjectionWriter`` made of a closure, for projections that write as
/// they go.
public final class ClosureProjectionWriter: ProjectionWriter {
    let body: (RecordedEvent) throws -> Void
    public init(_ body: @escaping (RecordedEvent) throws -> Void) { self.body = body }
    public func apply(_ event: RecordedEvent) throws { try body(event) }
}

extension Projection {
    /// Empties every database the projection owns (`mdb_drop`, keeping them).
    func removeAllData(in txn: WriteTransaction) throws {
        for name in databaseNames {
            let db: Database<[UInt8], [UInt8]> = try txn.createDatabase(name)
            try db.removeAll(in: txn)
        }
    }
}

/// The projections of a store, opened together in one environment. A store
/// is typed by its set, so callers reach their views with their own types:
///
/// ```swift
/// struct Views: ProjectionSet {
///     let count: EventCount
///     init(openingIn txn: WriteTransaction) throws { count = try EventCount(openingIn: txn) }
///     var all: [any Projection] { [count] }
/// }
/// let store = try EventStore<Views>(path: dir)
/// let n = try store.read { txn in try store.views.count.counts.get("order.placed", in: txn) }
/// ```
///
/// The engine opens a set again in another environment to rebuild there
/// (replay, verification), so `init` must only open databases.
public protocol ProjectionSet: Sendable {
    init(openingIn txn: WriteTransaction) throws
    var all: [any Projection] { get }
    /// Does ahead of a rebuild's writer, on another thread, the work that
    /// applying `events` will need and that is a function of the events
    /// alone (decoding payloads, tokenizing text), keeps it where the
    /// projections' writers look for it, and returns what forgets it. A
    /// rebuild calls it for the events after those its writer is applying
    /// (``ReplayPrefetch``), so that this work runs on a second core.
    ///
    /// A hint, never a source of truth: a writer must write the same bytes
    /// with or without what was prepared (one that finds nothing, or
    /// something prepared from other bytes, does the work itself). By
    /// default, nothing is prepared.
    func prepare(_ events: [RecordedEvent]) -> PreparedEvents?
}

extension ProjectionSet {
    public func prepare(_ events: [RecordedEvent]) -> PreparedEvents? { nil }
}

/// What ``ProjectionSet/prepare(_:)`` keeps for some events, until the
/// rebuild has committed them and calls ``release()``.
///
/// ```swift
/// func prepare(_ events: [RecordedEvent]) -> PreparedEvents? {
///     let keys = cache.insert(events.map(decode))
///     return PreparedEvents { cache.remove(keys) }
/// }
/// ```
public struct PreparedEvents: Sendable {
    private let forget: @Sendable () -> Void

    public init(release forget: @escaping @Sendable () -> Void) {
        self.forget = forget
    }

    /// Forgets what was prepared.
    public func release() { forget() }
}
