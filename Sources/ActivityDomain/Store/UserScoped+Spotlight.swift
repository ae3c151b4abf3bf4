import EventLog
import Foundation
import LMDB
import TextIndex

/// Core Spotlight in one user space (SPEC §4, §5, §9), with Apple's names:
/// index batches and searches (the item commands are ``SpaceCommands``'s,
/// the item reads ``SpaceQueries``'s).
///
/// ```swift
/// let alice = store.user("alice")
/// var item = SearchableItem(uniqueIdentifier: "order-1", domainIdentifier: "orders")
/// item.attributeSet.title = "Oat latte"
/// try alice.indexSearchableItems([item])
/// let hits = try alice.search("oat lat", now: Date())                 // [SearchHit], by score
/// let matches = try alice.query(#"kind == "item" && title == "oat*"c"#, now: Date())
/// try alice.deleteSearchableItems(withDomainIdentifiers: ["orders"])
/// ```
extension UserScoped {
    /// Runs an index batch: the commands `body` records commit together with
    /// `clientState` as the named index's new client state (at most 250
    /// bytes), in one transaction. When `expectedClientState` is given and
    /// differs from the stored one, the whole batch is rejected
    /// (``ActivityError/Code/mismatchedClientState``) and nothing is written;
    /// when `body` throws, nothing is written either.
    ///
    /// `body` only records commands; they run when it returns, so that it
    /// runs once even when the engine repeats a write after growing the map.
    /// - Returns: the results of the recorded commands, in order.
    @discardableResult
    public func indexBatch(index: String, clientState: Data, expectedClientState: Data? = nil, at time: Date? = nil,
                           _ body: (IndexBatch) throws -> Void) throws -> [CommandResult] {
        let batch = IndexBatch()
        try body(batch)
        let commands: [ActivityCommand] = [.beginIndexBatch(index: index)] + batch.commands
            + [.endIndexBatch(index: index, clientState: clientState, expectedClientState: expectedClientState)]
        let results = try write(commands, at: time)
        return Array(results.dropFirst().dropLast())
    }

    // MARK: Searches (each in a read of its own; ``read(after:timeout:_:)-(_,_,((SpaceReader)throws->R))`` shares one)

    /// Free-text search over items and saved activities eligible for search:
    /// every word must match, the last also as a prefix; ranked by BM25F,
    /// then identifier; documents expired at `now` left out; at most `limit`.
    ///
    /// The keyword index follows the log (`Docs/Semantics.md`, "What a
    /// search sees"): a write is searchable shortly after it returns. With
    /// `after`, a position a write returned (``CommandResult/positions``),
    /// the search first waits, up to `timeout`, until the index has applied
    /// the log through it, and throws ``EventLog/EventLogError/Code/indexBehind``
    /// (saying how far behind the index is) when it has not. Without it, it
    /// answers from the index as it is (``ActivityStore/indexStatus()`` says
    /// how far that lags). A forgotten user's documents are never returned,
    /// even before the index has applied the forget: the space is found in
    /// the log.
    ///
    /// ```swift
    /// let result = try alice.indexSearchableItems([item])
    /// let hits = try alice.search("oat", now: Date(), after: result.positions?.upperBound)
    /// ```
    public func search(_ text: String, now: Date, limit: Int = 20, after position: Position? = nil,
                       timeout: Duration = .seconds(10)) throws -> [SearchHit] {
        try read(after: position, timeout: timeout) { try $0.search(text, now: now, limit: limit) }
    }

    /// The documents (items and saved activities) an expression of the query
    /// language matches at `now`, by identifier; throws `QueryError` (with
    /// its column) for a malformed one. `after` and `timeout` as for
    /// ``search(_:now:limit:after:timeout:)``.
    public func query(_ expression: String, now: Date, after position: Position? = nil,
                      timeout: Duration = .seconds(10)) throws -> [SearchHit] {
        try read(after: position, timeout: timeout) { try $0.query(expression, now: now) }
    }

    /// ``search(_:now:limit:after:timeout:)`` with each hit's document (its
    /// item or saved activity), all from one read: a page of results.
    public func searchDocuments(_ text: String, now: Date, limit: Int = 20, after position: Position? = nil,
                                timeout: Duration = .seconds(10)) throws -> [SearchResult] {
        try read(after: position, timeout: timeout) { try $0.searchDocuments(text, now: now, limit: limit) }
    }

    /// ``query(_:now:after:timeout:)`` with each hit's document, from one read.
    public func queryDocuments(_ expression: String, now: Date, after position: Position? = nil,
                               timeout: Duration = .seconds(10)) throws -> [SearchResult] {
        try read(after: position, timeout: timeout) { try $0.queryDocuments(expression, now: now) }
    }
}
