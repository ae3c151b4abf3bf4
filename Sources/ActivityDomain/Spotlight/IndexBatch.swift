import Foundation

/// The commands of one index batch, collected by
/// ``ActivityStore/indexBatch(index:clientState:expectedClientState:at:_:)``
/// and committed together with the index's new client state when the
/// closure returns.
///
/// ```swift
/// try store.indexBatch(index: "orders", clientState: Data("cursor-42".utf8),
///                      expectedClientState: Data("cursor-41".utf8)) { batch in
///     batch.indexSearchableItems(items)
///     batch.deleteSearchableItems(withIdentifiers: ["order-7"])
/// }
/// ```
///
/// The methods only record: nothing is validated or written until the
/// closure returns, and then everything is, in one transaction, or nothing.
public final class IndexBatch {
    private(set) var commands: [ActivityCommand] = []

    init() {}

    /// Adds or replaces items (`isUpdate`: merges into existing ones).
    public func indexSearchableItems(_ items: [SearchableItem]) {
        commands.append(.indexSearchableItems(items))
    }

    /// Removes the items with these identifiers; unknown ones are fine.
    public func deleteSearchableItems(withIdentifiers identifiers: [String]) {
        commands.append(.deleteSearchableItems(identifiers: identifiers))
    }

    /// Removes the items in these domains and every domain below them.
    public func deleteSearchableItems(withDomainIdentifiers domains: [String]) {
        commands.append(.deleteSearchableItemsInDomains(domains))
    }

    /// Removes every item and forgets every client state (this batch's new
    /// state is stored after it).
    public func deleteAllSearchableItems() {
        commands.append(.deleteAllSearchableItems)
    }
}
