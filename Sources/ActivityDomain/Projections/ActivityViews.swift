import EventLog
import LMDB

/// The projections of an activity store, opened together.
///
/// ```swift
/// let store = try EventStore<ActivityViews>(path: dir)   // or ActivityStore(path:)
/// let n = try store.read { txn in try store.views.saved.all(in: txn).count }
/// ```
///
/// Core Spotlight's item store (``items``) and the keyword index
/// (``search``, over items and saved activities) are in the same set; each
/// projection owns its databases and ignores events that are not its own.
public struct ActivityViews: ProjectionSet {
    public let registry: ActivityRegistry
    public let current: CurrentActivityView
    public let saved: SavedActivityStore
    public let items: SearchableItemStore
    public let search: KeywordIndexProjection

    public init(openingIn txn: WriteTransaction) throws {
        registry = try ActivityRegistry(openingIn: txn)
        current = try CurrentActivityView(openingIn: txn)
        saved = try SavedActivityStore(openingIn: txn)
        items = try SearchableItemStore(openingIn: txn)
        search = try KeywordIndexProjection(openingIn: txn)
    }

    /// In application order: the registry first, so the others may read it.
    public var all: [any Projection] { [registry, current, saved, items, search] }
}
