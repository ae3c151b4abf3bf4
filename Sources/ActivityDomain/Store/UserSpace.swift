/// One user's space in a store (SPEC §9): every command and read of
/// ``UserScoped``, with Apple's names, acting on this user's data alone.
/// Activity ids, devices, saved keys, item identifiers, domains and
/// client-state index names are this user's; another user's same names are
/// other things.
///
/// ```swift
/// let alice = store.user("alice")
/// try alice.indexSearchableItems(items)
/// let state = try alice.fetchLastClientState(index: "orders-indexer")
/// try alice.becomeCurrent("a1")
/// let hits = try alice.search("latte", now: Date())   // alice's documents, ranked by alice's statistics
/// try alice.deleteAllSearchableItems()                // what an app does when its user logs out
/// ```
///
/// A handle is a value: make one per request if you like; it holds no
/// transaction and writes nothing until a command runs.
public struct UserSpace: UserScoped {
    public let store: ActivityStore
    /// The user: the space's name (`""` is the default space).
    public let user: String

    public var scope: String? { user }
}

/// What one user space holds (`eventlog users`).
public struct UserSummary: Sendable, Hashable, Codable {
    public var user: String
    /// Activities, invalidated ones included.
    public var activities: Int
    /// Saved copies.
    public var saved: Int
    /// Searchable items.
    public var items: Int
    /// Documents in the keyword index (items and saved activities eligible for search).
    public var documents: Int
}
