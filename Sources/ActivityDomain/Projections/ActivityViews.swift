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
    /// The user spaces: each user's id in every other view's keys.
    public let spaces: SpaceDirectory
    public let registry: ActivityRegistry
    public let current: CurrentActivityView
    public let saved: SavedActivityStore
    public let items: SearchableItemStore
    public let search: KeywordIndexProjection

    public init(openingIn txn: WriteTransaction) throws {
        spaces = try SpaceDirectory(openingIn: txn)
        registry = try ActivityRegistry(openingIn: txn, spaces: spaces)
        current = try CurrentActivityView(openingIn: txn, spaces: spaces)
        saved = try SavedActivityStore(openingIn: txn, spaces: spaces)
        // One decode of each Core Spotlight event for both of its projections.
        let decodedEvents = DecodedEventCache()
        items = try SearchableItemStore(openingIn: txn, spaces: spaces, decodedEvents: decodedEvents)
        search = try KeywordIndexProjection(openingIn: txn, spaces: spaces, decodedEvents: decodedEvents)
    }

    /// In application order: the space directory first, so that the others
    /// find each event's space in it; then the registry, which they may read.
    public var all: [any Projection] { [spaces, registry, current, saved, items, search] }
}
