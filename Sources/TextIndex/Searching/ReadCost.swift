/// How many LMDB lookups a search or query made: each get, seek and
/// cursor step counts one, found or not. A function of the space's own
/// keys, so a test can show that a space's reads do not grow with what
/// other spaces hold (keys, not time: the count does not vary with load).
///
/// ```swift
/// var cost = ReadCost()
/// let hits = try index.space(7).search("latte", now: now, cost: &cost, in: txn)
/// cost.keys   // e.g. 23
/// ```
public struct ReadCost: Sendable, Equatable {
    /// Lookups made.
    public internal(set) var keys: Int = 0
    /// Postings values (one term in one block) a ranked search did not
    /// decode, because their score bound (``PostingBound``) was below the
    /// `limit`-th best score it had found.
    public internal(set) var skippedValues: Int = 0

    public init() {}
}
