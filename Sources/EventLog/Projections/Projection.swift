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
    /// What applying `event` needs that is a function of the event and the
    /// log alone (decoding it, finding what it belongs to, tokenizing its
    /// text), done ahead of the writer. The indexer calls it on its
    /// preparing thread, in a read transaction of the log (`log`), and hands
    /// the result to the writer's ``ProjectionWriter/apply(_:prepared:)``
    /// on the applying thread, so that this work runs on other cores. The
    /// indexer has two preparing threads: `prepare` runs for different
    /// events at once, so it keeps no state between calls. By default nil:
    /// the writer does all the work.
    ///
    /// It must be deterministic, as the writer is: the index is built from
    /// what it returns, live and in a rebuild alike.
    func prepare(_ event: RecordedEvent, log: LogReader) throws -> (any Sendable)?
}

extension Projection {
    public func makeWriter(in txn: WriteTransaction, log: LogReader) throws -> any ProjectionWriter {
        try makeWriter(in: txn)
    }

    public func prepare(_ event: RecordedEvent, log: LogReader) throws -> (any Sendable)? { nil }
}

/// Applies the events of one transaction to one projection. It may keep
/// state in memory across the events (to write each key once) as long as
/// ``finish()`` writes it.
public protocol ProjectionWriter: AnyObject {
    func apply(_ event: RecordedEvent) throws
    /// Applies `event` with what ``Projection/prepare(_:log:)`` returned for
    /// it (nil when it prepared nothing). By default ``apply(_:)``.
    func apply(_ event: RecordedEvent, prepared: (any Sendable)?) throws
    func finish() throws
}

extension ProjectionWriter {
    public func apply(_ event: RecordedEvent, prepared: (any Sendable)?) throws { try apply(event) }
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

/// Projections applied together, in the order of ``all``.
public protocol ProjectionList: Sendable {
    var all: [any Projection] { get }
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
///
/// **The index.** A set may name views that are not applied in the write
/// but behind the log, by the store's indexer, in an environment of their
/// own (`<store>/index`): ``Index``, opened by ``openIndex(in:)``. Commands
/// are validated against the views of the set itself, which every commit
/// applies; the index follows the log and is a pure function of it
/// (`Docs/Architecture.md`, "The index").
///
/// ```swift
/// struct Views: ProjectionSet {
///     let count: EventCount
///     init(openingIn txn: WriteTransaction) throws { count = try EventCount(openingIn: txn) }
///     var all: [any Projection] { [count] }
///     func openIndex(in txn: WriteTransaction) throws -> WordIndex { try WordIndex(openingIn: txn) }
/// }
/// ```
public protocol ProjectionSet: ProjectionList {
    /// The views the indexer applies behind the log, in the index
    /// environment; ``NoProjections`` (no index environment) by default.
    associatedtype Index: ProjectionList = NoProjections
    init(openingIn txn: WriteTransaction) throws
    /// Opens the index's projections in `txn`, a write transaction of an
    /// index environment (the store's, or a rebuild's scratch one); it may
    /// give them what of this set they read (in the log's transactions).
    /// It must only open databases.
    func openIndex(in txn: WriteTransaction) throws -> Index
    /// Who an event belongs to (a user, as bytes), for the log's
    /// dictionary trainer: a dictionary keeps only text found in the events
    /// of at least ``DictionaryTrainer/minimumOwners`` owners, so that none
    /// holds what one user alone wrote (`Docs/LogFormat.md`,
    /// "Dictionaries"). Nil: the event adds no owner. The default says nil
    /// for every event, so no text enters a dictionary (only its entropy
    /// tables are trained).
    static func dictionaryOwner(of event: RecordedEvent) -> [UInt8]?
}

extension ProjectionSet {
    public static func dictionaryOwner(of event: RecordedEvent) -> [UInt8]? { nil }
}

extension ProjectionSet where Index == NoProjections {
    public func openIndex(in txn: WriteTransaction) throws -> NoProjections { NoProjections() }
}

extension ProjectionSet {
    /// Whether the set has an index, and so the store an index environment.
    static var hasIndex: Bool { Index.self != NoProjections.self }
}

/// No projections: the index of a store that has none.
public struct NoProjections: ProjectionList {
    public init() {}
    public var all: [any Projection] { [] }
}
