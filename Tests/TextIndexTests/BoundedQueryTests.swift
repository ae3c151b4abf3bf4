import Foundation
import Testing
import TextIndex

/// SPEC §2, "Input is bounded", for queries: nesting, whatever the thread's
/// stack, and one date rule.
@Suite("Queries are bounded")
struct BoundedQueryTests {
    /// Runs `body` on a thread with a 256 KiB stack (a service's threads
    /// may have small ones): a recursion past it would crash the test.
    static func onSmallStack<R>(_ body: @escaping () -> R) -> R {
        let box = ResultBox<R>(body)
        let thread = Thread { box.run() }
        thread.stackSize = 256 << 10
        thread.start()
        box.done.wait()
        return box.value!
    }

    @Test("35,000 nested parentheses are a QueryError naming the limit, on a 256 KiB stack; 64 are fine")
    func deepParentheses() throws {
        let now = TemporaryIndex.now
        let deep = String(repeating: "(", count: 35_000) + #"title == "x""# + String(repeating: ")", count: 35_000)
        let message = Self.onSmallStack { () -> String in
            do {
                _ = try QueryParser.parse(deep, now: now)
                return "parsed"
            } catch {
                return "\(error)"
            }
        }
        #expect(message.contains("parentheses nest deeper than \(QueryParser.maxNesting)"), "\(message)")
        let fine = String(repeating: "(", count: QueryParser.maxNesting) + #"title == "x""# + String(repeating: ")", count: QueryParser.maxNesting)
        #expect(throws: Never.self) { try QueryParser.parse(fine, now: now) }
    }

    @Test("a run of 20,000 || terms parses into a balanced tree, and is evaluated (its limits raised), on a 256 KiB stack; the default limits refuse it")
    func longChains() throws {
        let t = try TemporaryIndex()
        try t.write { w in try w.upsert(.item("latte", title: "Oat Latte")) }
        let terms = (0..<20_000).map { #"title == "t\#($0)""# }
        let query = terms.joined(separator: " || ") + #" || title == "Oat Latte""#
        var limits = QueryLimits()
        limits.comparisons = 30_000
        limits.work = .max
        limits.timeout = nil
        let (depth, hits) = Self.onSmallStack { () -> (Int, [String]) in
            let expression = try? QueryParser.parse(query, now: TemporaryIndex.now)
            let hits = (try? t.environment.read { try t.index.query(query, now: TemporaryIndex.now, limits: limits, in: $0) }).map { t.ids($0) } ?? []
            return (expression?.depth ?? -1, hits)
        }
        #expect(depth > 0 && depth <= 16, "depth \(depth)")
        #expect(hits == ["latte"])
        #expect(throws: QueryLimitError.self) { try t.query(query) }
    }

    @Test("$time.iso takes the one date rule: 2026-02-30 and 2026-02-29 are malformed, never rolled over; 2028-02-29 is a day",
          arguments: ["2026-02-30T00:00:00Z", "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-04-31T10:00:00Z", "2026-02-28T24:00:00Z"])
    func impossibleDates(text: String) throws {
        #expect(ISO8601Time.date(from: text) == nil)
        #expect { try QueryParser.parse(#"contentCreationDate > $time.iso("\#(text)")"#, now: TemporaryIndex.now) } throws: {
            ($0 as? QueryError)?.message.contains("is not an ISO-8601 date") == true
        }
    }

    @Test("a valid leap day and an offset parse the same in the query and in ISO8601Time")
    func oneParser() throws {
        for text in ["2028-02-29T12:00:00Z", "2026-11-22T12:00:00+02:00", "2026-11-22T10:00:00.5Z"] {
            let date = try #require(ISO8601Time.date(from: text))
            let expression = try QueryParser.parse(#"contentCreationDate == $time.iso("\#(text)")"#, now: TemporaryIndex.now)
            guard case .compare(_, _, .date(let parsed)) = expression else { Issue.record("not a date: \(expression)"); continue }
            #expect(parsed == date)
        }
    }
}

/// A closure and its result, handed to another thread and back; the
/// semaphore orders the accesses.
private final class ResultBox<R>: @unchecked Sendable {
    let body: () -> R
    var value: R?
    let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping () -> R) { self.body = body }

    func run() {
        value = body()
        done.signal()
    }
}
