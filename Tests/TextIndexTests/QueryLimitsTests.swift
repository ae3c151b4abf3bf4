import Foundation
import LMDB
import Testing
@testable import TextIndex

/// A query's cost is bounded (``QueryLimits``): comparisons, the terms its
/// wildcards reach, its work and a deadline the caller sets; past any, a
/// ``QueryLimitError`` naming the bound, never a long computation.
@Suite("Query cost is bounded")
struct QueryLimitsTests {
    /// 3,000 documents with a long description each, and titles of many distinct words.
    static func index() throws -> TemporaryIndex {
        let t = try TemporaryIndex()
        try t.write { w in
            for n in 0..<3_000 {
                try w.upsert(.item("item-\(n)", title: "alpha\(n) beta\(n % 97) word\(n % 1000)",
                                   ["contentDescription": [String(repeating: "lorem ipsum dolor \(n) ", count: 20)]]))
            }
        }
        return t
    }

    static func query(_ t: TemporaryIndex, _ text: String, _ limits: QueryLimits) throws -> [SearchHit] {
        try t.environment.read { txn in try t.index.query(text, now: TemporaryIndex.now, limits: limits, in: txn) }
    }

    static func limit(of body: () throws -> Any) -> QueryLimitError.Limit? {
        do {
            _ = try body()
            return nil
        } catch let error as QueryLimitError {
            return error.limit
        } catch {
            Issue.record("not a QueryLimitError: \(error)")
            return nil
        }
    }

    @Test("each bound stops a query that passes it with its own error; within the bounds the same query answers")
    func eachBound() throws {
        let t = try Self.index()
        let infix = #"contentDescription == "*olo*"cd"#
        // Within the defaults: answered (every document read to check it).
        #expect(try Self.query(t, infix, QueryLimits()).count == 3_000)
        // Comparisons: 1,000 OR'd terms (a 30 KB query) refused before any work.
        let many = (0..<1_000).map { #"title == "alpha\#($0)""# }.joined(separator: " || ")
        var limits = QueryLimits()
        let started = DispatchTime.now().uptimeNanoseconds
        #expect(Self.limit { try Self.query(t, many, limits) } == .comparisons)
        #expect(DispatchTime.now().uptimeNanoseconds - started < 1_000_000_000)
        // Expansions: a prefix that reaches every `alpha…` term.
        limits.expansions = 500
        #expect(Self.limit { try Self.query(t, #"title == "alpha*"w"#, limits) } == .expansions)
        #expect(Self.limit { try Self.query(t, #"title == "alpha12*"w"#, limits) } == nil)
        // Work: an infix pattern reads every document to check it.
        limits = QueryLimits()
        limits.work = 10_000
        #expect(Self.limit { try Self.query(t, infix, limits) } == .work)
        // The deadline the caller sets.
        limits = QueryLimits()
        limits.timeout = .zero
        #expect(Self.limit { try Self.query(t, infix, limits) } == .timeout)
        let error = try #require(throws: QueryLimitError.self) { try Self.query(t, infix, limits) }
        #expect(error.description.contains("deadline"))
    }

    @Test("the default bounds stop 120 OR'd infix patterns over every document well before they would finish")
    func defaultWorkBound() throws {
        let t = try Self.index()
        let heavy = (0..<120).map { #"contentDescription == "*x\#($0)*"cd"# }.joined(separator: " || ")
        // The default work bound, not the deadline, stops it (the deadline lifted, so a slow machine does not decide).
        var limits = QueryLimits()
        limits.timeout = .seconds(3_600)
        #expect(Self.limit { try Self.query(t, heavy, limits) } == .work)
    }
}
