import EventLog
import Foundation
import LMDB
import TextIndex

/// Core Spotlight in one user space (SPEC §4, §5, §9), with Apple's names.
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
    // MARK: Commands

    /// Indexes items: each replaces the item with its identifier, or (with
    /// `isUpdate`) merges into it; an update of a missing item is dropped and
    /// listed in ``CommandResult/droppedUpdates``.
    @discardableResult
    public func indexSearchableItems(_ items: [SearchableItem], at time: Date? = nil) throws -> CommandResult {
        try writeOne(.indexSearchableItems(items), at: time)
    }

    /// Removes the items with these identifiers; unknown ones are fine.
    @discardableResult
    public func deleteSearchableItems(withIdentifiers identifiers: [String], at time: Date? = nil) throws -> CommandResult {
        try writeOne(.deleteSearchableItems(identifiers: identifiers), at: time)
    }

    /// Removes the items in these domains and in every domain below them,
    /// component by component (`orders` removes `orders.2024`, not `orders2024`).
    @discardableResult
    public func deleteSearchableItems(withDomainIdentifiers domains: [String], at time: Date? = nil) throws -> CommandResult {
        try writeOne(.deleteSearchableItemsInDomains(domains), at: time)
    }

    /// Removes every item of this space and forgets its client states.
    @discardableResult
    public func deleteAllSearchableItems(at time: Date? = nil) throws -> CommandResult {
        try writeOne(.deleteAllSearchableItems, at: time)
    }

    /// Appends the removal of every item of this space expired at `now`
    /// (expiration ≤ now); nothing when none is. On the ``ActivityStore``
    /// itself, every space's: each space's removals as an event of its own.
    @discardableResult
    public func purgeExpired(now: Date, at time: Date? = nil) throws -> CommandResult {
        try writeOne(.purgeExpired(now: now), at: time)
    }

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

    // MARK: Queries (each in a read transaction of its own; ``reading(_:)`` shares one)

    /// The client state the last committed batch of `index` stored, or nil.
    public func fetchLastClientState(index: String) throws -> Data? {
        try readingLog { try $0.fetchLastClientState(index: index) }
    }

    /// Every stored client state, by index name.
    public func clientStates() throws -> [IndexClientState] {
        try readingLog { try $0.clientStates() }
    }

    /// The item with this identifier, or nil.
    public func item(_ uniqueIdentifier: String) throws -> IndexedItem? {
        try readingLog { try $0.item(uniqueIdentifier) }
    }

    /// The items with these identifiers that exist, in the order asked,
    /// from one read transaction; unknown identifiers are left out.
    public func items(withIdentifiers identifiers: [String]) throws -> [IndexedItem] {
        try readingLog { try $0.items(withIdentifiers: identifiers) }
    }

    /// Every item, by identifier (expired ones too, until purged).
    public func items() throws -> [IndexedItem] {
        try readingLog { try $0.items() }
    }

    /// The items in `domain` and every domain below it, by identifier.
    public func items(inDomain domain: String) throws -> [IndexedItem] {
        try readingLog { try $0.items(inDomain: domain) }
    }

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
        try reading(after: position, timeout: timeout) { try $0.search(text, now: now, limit: limit) }
    }

    /// The documents (items and saved activities) an expression of the query
    /// language matches at `now`, by identifier; throws `QueryError` (with
    /// its column) for a malformed one. `after` and `timeout` as for
    /// ``search(_:now:limit:after:timeout:)``.
    public func query(_ expression: String, now: Date, after position: Position? = nil,
                      timeout: Duration = .seconds(10)) throws -> [SearchHit] {
        try reading(after: position, timeout: timeout) { try $0.query(expression, now: now) }
    }

    /// ``search(_:now:limit:after:timeout:)`` with each hit's document (its
    /// item or saved activity), all from one read: a page of results.
    public func searchDocuments(_ text: String, now: Date, limit: Int = 20, after position: Position? = nil,
                                timeout: Duration = .seconds(10)) throws -> [SearchResult] {
        try reading(after: position, timeout: timeout) { try $0.searchDocuments(text, now: now, limit: limit) }
    }

    /// ``query(_:now:after:timeout:)`` with each hit's document, from one read.
    public func queryDocuments(_ expression: String, now: Date, after position: Position? = nil,
                               timeout: Duration = .seconds(10)) throws -> [SearchResult] {
        try reading(after: position, timeout: timeout) { try $0.queryDocuments(expression, now: now) }
    }
}
