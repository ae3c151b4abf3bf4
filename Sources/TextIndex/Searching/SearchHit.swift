/// A document found by ``TextIndex/search(_:now:limit:in:)`` or
/// ``TextIndex/query(_:now:in:)``.
///
/// ```swift
/// for hit in try index.search("latte", now: now, in: txn) {
///     print(hit.kind, hit.identifier, hit.score)
/// }
/// ```
public struct SearchHit: Sendable, Equatable, Hashable, Codable {
    public var kind: String
    public var identifier: String
    /// BM25F score for a search (higher is better); 0 for a query.
    public var score: Double

    public init(kind: String, identifier: String, score: Double) {
        self.kind = kind
        self.identifier = identifier
        self.score = score
    }
}
