import EventLog
import LMDB

/// The projections of an activity store, opened together.
///
/// ```swift
/// let store = try EventStore<ActivityViews>(path: dir)   // or ActivityStore(path:)
/// let n = try store.read { txn in try store.views.saved.all(in: txn).count }
/// ```
///
/// Core Spotlight's item store and the keyword index join this set as more
/// properties and entries of ``all``; each projection owns its databases
/// and ignores events of other domains.
public struct ActivityViews: ProjectionSet {
    public let registry: ActivityRegistry
    public let current: CurrentActivityView
    public let saved: SavedActivityStore

    public init(openingIn txn: WriteTransaction) throws {
        registry = try ActivityRegistry(openingIn: txn)
        current = try CurrentActivityView(openingIn: txn)
        saved = try SavedActivityStore(openingIn: txn)
    }

    /// In application order: the registry first, so the others may read it.
    public var all: [any Projection] { [registry, current, saved] }
}
