import EventLog
import Foundation
import LMDB
import TextIndex

/// The reads of one user space in one read transaction of the log (and,
/// for search, one of the keyword index, begun just before it): what a
/// page needs, seeing one commit and nothing after it
/// (``UserScoped/read(after:timeout:_:)-(_,_,((SpaceReader)throws->R))``).
/// Every read of ``SpaceQueries``, and the searches.
///
/// ```swift
/// let page = try store.user("alice").read { space in
///     (current: try space.currentActivities(),
///      results: try space.searchDocuments("latte", now: now),   // hits with their item or saved activity
///      position: space.position)                              // where a change feed picks up: changes(from: position + 1)
/// }
/// ```
///
/// A reader lives as long as its closure: it must not escape it. Keep the
/// closure short: an open read transaction keeps LMDB from reusing pages.
public struct SpaceReader: SpaceQueries {
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

    var views: ActivityViews { store.views }

    /// `body` of the space's id, or `empty` while the space has no data.
    func inSpace<R>(_ empty: R, _ body: (UInt32) throws -> R) rethrows -> R {
        guard let space else { return empty }
        return try body(space)
    }

    /// This reader itself.
    public func withReader<R>(_ body: (SpaceReader) throws -> R) throws -> R {
        try body(self)
    }

    // MARK: Search

    /// Free-text search (``UserScoped/search(_:now:limit:after:timeout:)``):
    /// identifiers and scores, from the index as far as it had applied the
    /// log when this read began (``UserScoped/read(after:timeout:_:)-(_,_,((SpaceReader)throws->R))``
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
            // The items read together, in the log's order (an event's items one after another).
            var items = try views.items.items(hits.filter { $0.kind == SearchDocuments.itemKind }.map(\.identifier), space: space, in: txn)
                .makeIterator()
            return try hits.compactMap { hit in
                switch hit.kind {
                case SearchDocuments.itemKind:
                    items.next()!.map { SearchResult(hit: hit, document: .item($0)) }
                case SearchDocuments.activityKind:
                    try views.saved.activity(forKey: hit.identifier, space: space, in: txn).map { SearchResult(hit: hit, document: .activity($0)) }
                default:
                    nil
                }
            }
        }
    }
}
