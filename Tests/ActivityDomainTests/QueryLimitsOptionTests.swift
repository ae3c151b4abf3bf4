import EventLog
import Foundation
import Testing
import TextIndex
@testable import ActivityDomain

/// The library's caller sets what one query may cost, a deadline above
/// all (``ActivityStoreOptions/queryLimits``); past it, the query throws
/// ``QueryLimitError`` rather than hold a service's thread.
@Suite("Query limits set by the caller")
struct QueryLimitsOptionTests {
    @Test("ActivityStoreOptions.queryLimits: a deadline of zero stops a costly query with a timeout; work and comparisons likewise; the defaults answer it")
    func callerSetsTheLimits() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let items = (0..<400).map { n in makeItem("item-\(n)", title: "Latte number \(n) with oat milk") }
        do {
            let store = try ActivityStore(path: path, options: testOptions())
            try store.indexSearchableItems(items, at: at(1))
            let costly = #"title == "*umbe*"cd"#
            #expect(try store.query(costly, now: at(2), after: try store.head()).count == 400)
        }
        for (limit, set) in [(QueryLimitError.Limit.timeout, { (l: inout QueryLimits) in l.timeout = .zero }),
                             (.work, { (l: inout QueryLimits) in l.work = 1_000 }),
                             (.comparisons, { (l: inout QueryLimits) in l.comparisons = 0 })] {
            var options = testOptions()
            set(&options.queryLimits)
            let store = try ActivityStore(path: path, options: options)
            defer { store.close() }
            #expect { try store.query(#"title == "*umbe*"cd"#, now: at(2), after: try store.head()) } throws: {
                ($0 as? QueryLimitError)?.limit == limit
            }
        }
    }
}
