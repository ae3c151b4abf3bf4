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
    ///
    /// `contentIn`: the transaction the content readers (``contentReader``,
    /// ``namedContentReader``) read documents' content in, when it lives in
    /// another environment than the index (a store's log beside its index);
    /// by default `txn`.
    ///
    /// Its cost is bounded (`limits`, ``QueryLimits``): too many
    /// comparisons, wildcards that reach too many terms, too much work or a
    /// deadline passed throw ``QueryLimitError``.
    public func query(_ text: String, now: Date, limits: QueryLimits = QueryLimits(), in txn: ReadTransaction,
                      contentIn: ReadTransaction? = nil) throws -> [SearchHit] {
        var cost = ReadCost()
        return try query(text, now: now, limits: limits, cost: &cost, in: txn, contentIn: contentIn)
    }

    /// ``query(_:now:in:contentIn:)``, adding to `cost` the LMDB lookups it made.
    public func query(_ text: String, now: Date, limits: QueryLimits = QueryLimits(), cost: inout ReadCost, in txn: ReadTransaction,
                      contentIn: ReadTransaction? = nil) throws -> [SearchHit] {
        let expression = try QueryParser.parse(text, now: now, attributes: queryAttributes)
        return try query(expression, now: now, limits: limits, cost: &cost, in: txn, contentIn: contentIn)
    }

    /// The documents matching a parsed query; see ``query(_:now:in:contentIn:)``.
    public func query(_ expression: QueryExpression, now: Date, limits: QueryLimits = QueryLimits(), in txn: ReadTransaction,
                      contentIn: ReadTransaction? = nil) throws -> [SearchHit] {
        var cost = ReadCost()
        return try query(expression, now: now, limits: limits, cost: &cost, in: txn, contentIn: contentIn)
    }

    /// ``query(_:now:in:contentIn:)`` of a parsed query, adding to `cost` the LMDB lookups it made.
    public func query(_ expression: QueryExpression, now: Date, limits: QueryLimits = QueryLimits(), cost: inout ReadCost,
                      in txn: ReadTransaction, contentIn: ReadTransaction? = nil) throws -> [SearchHit] {
        let comparisons = expression.comparisonCount
        guard comparisons <= limits.comparisons else {
            throw QueryLimitError(limit: .comparisons, reached: "\(comparisons)", allowed: "\(limits.comparisons)")
        }
        var evaluator = try QueryEvaluator(index: self, txn: txn, contentTxn: contentIn, limits: limits)
        let ids = try evaluator.evaluate(expression, within: nil)
        var reads = evaluator.reads
        defer { cost.keys += reads }
        var hits: [SearchHit] = []
        var keys: [[UInt8]] = []
        hits.reserveCapacity(ids.count)
        keys.reserveCapacity(ids.count)
        func add(kind: String, identifier: String) {
            hits.append(SearchHit(kind: kind, identifier: identifier, score: 0))
            // Sort key: identifier, NUL, kind (UTF-8), compared with memcmp.
            keys.append(Array(identifier.utf8) + [0] + Array(kind.utf8))
        }
        if ids.count > 2_000 {
            // Many results: one pass over `ids` (kind 0x00 identifier → id) and
            // one range of expiration dates beat a random read per document.
            var expired = Set<UInt32>()
            let prefix = scoped(AttributeKey.prefix(name: "expirationDate", type: "d"))
            let limit = now.timeIntervalSinceReferenceDate
            let valuesCursor = try values.cursor(in: txn)
            reads += 1
            var v = try prefix.withUnsafeBytes { try valuesCursor.seekBytes(atOrAfter: $0) }
            while let e = v, e.key.count == prefix.count + 12, e.key.starts(with: prefix) {
                let t = AttributeKey.number(fromOrderable: UnsafeRawBufferPointer(rebasing: e.key[prefix.count..<(prefix.count + 8)]))
                if t > limit { break }
                try AttributeBlock.forEachDocument(key: e.key, value: e.value) { expired.insert($0) }
                reads += 1
                v = try valuesCursor.nextBytes()
            }
            let walk = try idPages.walker(prefix: spacePrefix, in: txn)
            reads += 1
            var more = try walk.first()
            while more {
                let id = try TextIndex.decodeDocumentId(walk.value)
                if ids.contains(id) && !expired.contains(id) {
                    walk.key.withUnsafeBytes { identity in
                        guard let nul = identity.firstIndex(of: 0) else { return }
                        add(kind: String(decoding: UnsafeRawBufferPointer(rebasing: identity[..<nul]), as: UTF8.self),
                            identifier: String(decoding: UnsafeRawBufferPointer(rebasing: identity[(nul + 1)...]), as: UTF8.self))
                    }
                }
                reads += 1
                more = try walk.next()
            }
        } else {
            for id in ids {
                reads += 1
                guard let doc = try withDocumentRecord(id, in: txn, { try DocumentRecord.decodeHeader($0) }),
                      !doc.isExpired(at: now) else { continue }
                add(kind: doc.kind, identifier: doc.identifier)
            }
        }
        hits = ByteOrder.order(of: keys).map { hits[$0] }
        return hits
    }
}
