import EventLog
import LMDB

/// The projections of an activity store, opened together: the command
/// views, which every commit applies and commands are validated against,
/// and (``openIndex(in:)``) the keyword index, which the indexer applies
/// behind the log in the index environment.
///
/// ```swift
/// let store = try EventStore<ActivityViews>(path: dir)   // or ActivityStore(path:)
/// let n = try store.read { txn in try store.views.saved.all(in: txn).count }
/// ```
///
/// Each projection owns its databases and ignores events that are not its own.
public struct ActivityViews: ProjectionSet {
    /// The user spaces: each user's id in every other view's keys.
    public let spaces: SpaceDirectory
    public let registry: ActivityRegistry
    public let current: CurrentActivityView
    public let saved: SavedActivityStore
    public let items: SearchableItemStore

    public init(openingIn txn: WriteTransaction) throws {
        spaces = try SpaceDirectory(openingIn: txn)
        registry = try ActivityRegistry(openingIn: txn, spaces: spaces)
        current = try CurrentActivityView(openingIn: txn, spaces: spaces)
        saved = try SavedActivityStore(openingIn: txn, spaces: spaces)
        items = try SearchableItemStore(openingIn: txn, spaces: spaces)
    }

    /// In application order: the space directory first, so that the others
    /// find each event's space in it; then the registry, which they may read.
    public var all: [any Projection] { [spaces, registry, current, saved, items] }

    /// The user an event belongs to (field 15 of its payload; the default
    /// space `""` for version 1 and store-wide events): the owner the log's
    /// dictionary trainer counts, so that a dictionary keeps only text
    /// that several users' events hold. Nil for a payload that does not scan.
    public static func dictionaryOwner(of event: RecordedEvent) -> [UInt8]? {
        event.payload.withUnsafeBytes { bytes in
            try? EventSpace.scanUserBytes(bytes, type: event.type, position: event.position) { [UInt8]($0) }
        }
    }

    /// The keyword index, opened in `txn` of the index environment; it
    /// finds events' spaces in this set's directory and items' content in
    /// this environment's log, both read in the log's transactions.
    public func openIndex(in txn: WriteTransaction) throws -> ActivityIndex {
        guard let payloads = items.log else {
            throw ActivityError(.invalidValue, operation: "open", field: "index", value: "an environment without a log",
                                allowed: "the views of a store, whose environment holds its log")
        }
        return ActivityIndex(search: try KeywordIndexProjection(openingIn: txn, spaces: spaces, payloads: payloads))
    }
}

/// The index of an activity store: the keyword index (``KeywordIndexProjection``)
/// over searchable items and saved activities, in the index environment.
///
/// ```swift
/// let hits = try store.eventStore.readIndex(after: position) { index, log in
///     try store.indexViews.search.index.space(0).search("latte", now: Date(), in: index)
/// }
/// ```
public struct ActivityIndex: ProjectionList {
    public let search: KeywordIndexProjection

    public var all: [any Projection] { [search] }
}
