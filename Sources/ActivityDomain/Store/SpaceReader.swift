import EventLog
import Foundation
import LMDB
import TextIndex

/// The reads of one user space in one read transaction of the log (and,
/// for search, one of the keyword index, begun just before it): what a
/// page needs, seeing one commit and nothing after it
/// (``UserScoped/reading(after:timeout:_:)-(_,_,((SpaceReader)throws->R))``).
///
/// ```swift
/// let page = try store.user("alice").reading { space in
///     (current: try space.currentActivities(),
///      results: try space.searchDocuments("latte", now: now),   // hits with their item or saved activity
///      position: space.position)                              // where a change feed picks up: changes(from: position + 1)
/// }
/// ```
///
/// A reader lives as long as its closure: it must not escape it. Keep the
/// closure short: an open read transaction keeps LMDB from reusing pages.
public struct SpaceReader {
    let store: ActivityStore
    /// A read transaction of the log, where every view but the keyword index is.
    let txn: ReadTransaction
    /// A read transaction of the index environment, begun before ``txn`` (so
    /// the log is at least as far on as the index); nil for the readers of
    /// single reads that never search, and in a store opened read-only that
    /// has no index yet.
    let indexTxn: ReadTransaction?
    /// The space's id; nil while the space has no data (no event of it was applied).
    let space: UInt32?
    /// The space's name (`""`: the default space).
    public let user: String
    /// The log's last position as this read sees it: every event up to it,
    /// and none after it, is reflected in what it returns.
    public let position: Position

    init(store: ActivityStore, user: String, txn: ReadTransaction, indexTxn: ReadTransaction?) throws {
        self.store = store
        self.user = user
        self.txn = txn
        self.indexTxn = indexTxn
        space = try store.views.spaces.id(of: user, in: txn)
        position = try store.eventStore.head(in: txn)
    }

    private var views: ActivityViews { store.views }

    private func inSpace<R>(_ empty: R, _ body: (UInt32) throws -> R) rethrows -> R {
        guard let space else { return empty }
        return try body(space)
    }

    // MARK: Activities

    /// The activity with this id, in any state.
    public func activity(_ id: String) throws -> ActivityRecord? {
        try ActivityRules.checkIdentifier(id, field: "activity", operation: "activity")
        return try inSpace(nil) { try views.registry.record(id, space: $0, in: txn) }
    }

    /// Every activity of the space, by id.
    public func activities() throws -> [ActivityRecord] {
        try inSpace([]) { try views.registry.allRecords(space: $0, in: txn) }
    }

    /// The activity current on the space's `device`, or nil.
    public func currentActivity(onDevice device: String) throws -> CurrentActivity? {
        try ActivityRules.checkIdentifier(device, field: "device", operation: "currentActivity")
        return try inSpace(nil) { try views.current.activity(onDevice: device, space: $0, registry: views.registry, in: txn) }
    }

    /// Every current activity of the space, by device.
    public func currentActivities() throws -> [CurrentActivity] {
        try inSpace([]) { try views.current.all(space: $0, registry: views.registry, in: txn) }
    }

    /// What Handoff offers the user on `device` at `now`
    /// (``UserScoped/handoffCandidates(device:now:)``).
    public func handoffCandidates(device: String, now: Date) throws -> [CurrentActivity] {
        try ActivityRules.checkIdentifier(device, field: "device", operation: "handoff")
        let limit = store.options.handoffUserInfoLimit
        return try currentActivities()
            .filter { current in
                !Name.equal(current.device, device) && current.activity.eligibleForHandoff
                    && !current.activity.isExpired(at: now) && ActivityStore.encodedUserInfoSize(current.activity.userInfo) <= limit
            }
            .sorted { ($0.becameCurrentAt, $0.position) > ($1.becameCurrentAt, $1.position) }
    }

    // MARK: Saved activities

    /// Every saved copy of the space, by key.
    public func savedActivities() throws -> [SavedActivity] {
        try inSpace([]) { try views.saved.all(space: $0, in: txn) }
    }

    /// The copy saved under `key` (a persistentIdentifier, or an activity id).
    public func savedActivity(forKey key: String) throws -> SavedActivity? {
        try ActivityRules.checkIdentifier(key, field: "key", operation: "savedActivity")
        return try inSpace(nil) { try views.saved.activity(forKey: key, space: $0, in: txn) }
    }

    /// The saved copies with this targetContentIdentifier, most recently saved first.
    public func savedActivities(withTargetContentIdentifier identifier: String) throws -> [SavedActivity] {
        try inSpace([]) { try views.saved.activities(withTargetContentIdentifier: identifier, space: $0, in: txn) }
    }

    /// The saved copies with this webpageURL, most recently saved first.
    public func savedActivities(withWebpageURL url: URL) throws -> [SavedActivity] {
        try inSpace([]) { try views.saved.activities(withWebpageURL: url.absoluteString, space: $0, in: txn) }
    }

    /// What a persistentIdentifier, targetContentIdentifier or webpageURL
    /// names (``UserScoped/resolve(_:)``).
    public func resolve(_ identifier: String) throws -> SavedActivityResolution {
        try inSpace(.unknown) { try views.saved.resolve(identifier, space: $0, in: txn) }
    }

    /// Siri's "suggest returning to this screen" (``UserScoped/suggestions(now:limit:)``).
    public func suggestions(now: Date, limit: Int = 10) throws -> [Suggestion] {
        let records = try inSpace([]) { try views.saved.allRecords(space: $0, in: txn) }
        let nowMicros = now.eventMicroseconds
        let ranked = try records
            .filter { $0.copy.eligibleForPrediction && !($0.copy.hasExpirationDateMicros && $0.copy.expirationDateMicros <= nowMicros) }
            .map { try Suggestion(record: $0, nowMicros: nowMicros) }
            .sorted { $0.score != $1.score ? $0.score > $1.score : utf8Less($0.key, $1.key) }
        return Array(ranked.prefix(max(0, limit)))
    }

    // MARK: Items

    /// The client state the last committed batch of `index` stored, or nil.
    public func fetchLastClientState(index: String) throws -> Data? {
        try ActivityRules.checkIdentifier(index, field: "index", operation: "fetchLastClientState")
        return try inSpace(nil) { try views.items.clientState(ofIndex: index, space: $0, in: txn) }
    }

    /// Every stored client state, by index name.
    public func clientStates() throws -> [IndexClientState] {
        try inSpace([]) { try views.items.allClientStates(space: $0, in: txn) }
    }

    /// The item with this identifier, or nil.
    public func item(_ uniqueIdentifier: String) throws -> IndexedItem? {
        try ActivityRules.checkIdentifier(uniqueIdentifier, field: "uniqueIdentifier", operation: "item")
        return try inSpace(nil) { try views.items.item(uniqueIdentifier, space: $0, in: txn) }
    }

    /// The items with these identifiers that exist, in the order asked (an
    /// identifier asked twice gives its item twice); unknown ones left out.
    public func items(withIdentifiers identifiers: [String]) throws -> [IndexedItem] {
        for identifier in identifiers {
            try ActivityRules.checkIdentifier(identifier, field: "uniqueIdentifier", operation: "items")
        }
        return try inSpace([]) { space in try identifiers.compactMap { try views.items.item($0, space: space, in: txn) } }
    }

    /// Every item, by identifier (expired ones too, until purged).
    public func items() throws -> [IndexedItem] {
        try inSpace([]) { try views.items.all(space: $0, in: txn) }
    }

    /// The items in `domain` and every domain below it, by identifier.
    public func items(inDomain domain: String) throws -> [IndexedItem] {
        try SpotlightRules.checkDomainIdentifier(domain, operation: "items", field: "domain")
        return try inSpace([]) { try views.items.items(inDomain: domain, space: $0, in: txn) }
    }

    // MARK: Search

    /// Free-text search (``UserScoped/search(_:now:limit:after:timeout:)``):
    /// identifiers and scores, from the index as far as it had applied the
    /// log when this read began (``UserScoped/reading(after:timeout:_:)``
    /// waits for a position first).
    public func search(_ text: String, now: Date, limit: Int = 20) throws -> [SearchHit] {
        let indexTxn = try requireIndex("search")
        return try store.metrics.timeSearch {
            try inSpace([]) { try store.indexViews.search.index.space($0).search(text, now: now, limit: limit, in: indexTxn) }
        }
    }

    /// The documents an expression of the query language matches
    /// (``UserScoped/query(_:now:after:timeout:)``).
    public func query(_ expression: String, now: Date) throws -> [SearchHit] {
        let indexTxn = try requireIndex("query")
        return try store.metrics.timeQuery {
            try inSpace([]) {
                try store.indexViews.search.index.space($0).query(expression, now: now, limits: store.options.queryLimits, in: indexTxn, contentIn: txn)
            }
        }
    }

    private func requireIndex(_ operation: String) throws -> ReadTransaction {
        guard let indexTxn else {
            // Damaged, not an index, unreadable: why, with its remedy (opened read-only).
            if let unavailable = store.eventStore.indexUnavailable { throw unavailable }
            throw EventLogError(.viewsStale, operation: operation,
                                "the store at \(store.eventStore.environment.path) has no index environment yet (index/): "
                                    + "opening it for writing (a service, `eventlog replay`) builds it behind the log")
        }
        return indexTxn
    }

    /// ``search(_:now:limit:)`` with each hit's document (its item or saved
    /// activity) read in the same transaction: a page of results in one read.
    public func searchDocuments(_ text: String, now: Date, limit: Int = 20) throws -> [SearchResult] {
        try documents(for: search(text, now: now, limit: limit))
    }

    /// ``query(_:now:)`` with each hit's document read in the same transaction.
    public func queryDocuments(_ expression: String, now: Date) throws -> [SearchResult] {
        try documents(for: query(expression, now: now))
    }

    /// The documents of `hits`, in their order: the item of an `item` hit,
    /// the saved activity of an `activity` hit. A hit whose document this
    /// read does not find (removed after the index answered: a keyword
    /// index that lags the views) is left out.
    public func documents(for hits: [SearchHit]) throws -> [SearchResult] {
        try inSpace([]) { space in
            try hits.compactMap { hit in
                switch hit.kind {
                case SearchDocuments.itemKind:
                    try views.items.item(hit.identifier, space: space, in: txn).map { SearchResult(hit: hit, document: .item($0)) }
                case SearchDocuments.activityKind:
                    try views.saved.activity(forKey: hit.identifier, space: space, in: txn).map { SearchResult(hit: hit, document: .activity($0)) }
                default:
                    nil
                }
            }
        }
    }
}
