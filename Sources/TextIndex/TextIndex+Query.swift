import Foundation
import LMDB

extension TextIndex {
    /// The documents matching query-language `text` (SPEC §5), not expired
    /// at `now`, by identifier (then kind); `score` is 0. `$time` values are
    /// relative to `now`.
    ///
    /// ```swift
    /// try index.query(#"title == "latte*"cd && (keywords == "coffee"c || domainIdentifier == "orders")"#,
    ///                 now: now, in: txn)
    /// ```
    ///
    /// Throws ``QueryError`` (with the column) for a malformed query or an
    /// attribute not in ``queryAttributes``.
    public func query(_ text: String, now: Date, in txn: ReadTransaction) throws -> [SearchHit] {
        let expression = try QueryParser.parse(text, now: now, attributes: queryAttributes)
        return try query(expression, now: now, in: txn)
    }

    /// The documents matching a parsed query; see ``query(_:now:in:)``.
    public func query(_ expression: QueryExpression, now: Date, in txn: ReadTransaction) throws -> [SearchHit] {
        var evaluator = try QueryEvaluator(index: self, txn: txn)
        let ids = try evaluator.evaluate(expression, within: nil)
        var hits: [SearchHit] = []
        hits.reserveCapacity(ids.count)
        for id in ids {
            guard let doc = try docs.withValue(forKey: UInt32Key(id), in: txn, { try DocumentRecord.decodeHeader($0) }),
                  !doc.isExpired(at: now) else { continue }
            hits.append(SearchHit(kind: doc.kind, identifier: doc.identifier, score: 0))
        }
        hits.sort { a, b in
            a.identifier != b.identifier ? utf8Less(a.identifier, b.identifier) : utf8Less(a.kind, b.kind)
        }
        return hits
    }
}
