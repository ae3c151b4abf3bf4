import Foundation
import LMDB
import Testing
import TextIndex

/// Random documents and operations, checked after every transaction against
/// a brute-force scan of the model and against a fresh index built from it.
@Suite("Postings stay exact")
struct ExactnessTests {
    static let vocabulary = [
        "latte", "Oat", "coffee", "Crème", "brûlée", "MyWindowClass", "状態", "アプリの状態", "索引所有应用内容",
        "gatito", "Introducción", "kdiff3", "wiki.example.org", "tea", "green", "LATTE", "naïve", "गतिविधि", "x",
    ]
    static let domains = ["orders", "orders.2024", "orders2024", "desserts"]
    static let now = TemporaryIndex.now

    static func randomDocument(_ id: String, _ rng: inout SeededGenerator) -> IndexDocument {
        func words(_ n: ClosedRange<Int>) -> String {
            (0..<Int.random(in: n, using: &rng)).map { _ in vocabulary.randomElement(using: &rng)! }.joined(separator: " ")
        }
        var doc = IndexDocument(kind: Bool.random(using: &rng) ? "item" : "activity", identifier: id)
        doc.fields["title"] = [words(1...3)]
        if Bool.random(using: &rng) { doc.fields["keywords"] = (0..<Int.random(in: 1...3, using: &rng)).map { _ in words(1...2) } }
        if Bool.random(using: &rng) { doc.fields["contentDescription"] = [words(0...12)] }
        if Int.random(in: 0..<4, using: &rng) == 0 { doc.fields["myNotes"] = [words(1...4)] }
        if Bool.random(using: &rng) { doc.attributes["domainIdentifier"] = .string(domains.randomElement(using: &rng)!) }
        if Bool.random(using: &rng) { doc.attributes["rating"] = .numbers([Double(Int.random(in: 0...5, using: &rng))]) }
        if Int.random(in: 0..<4, using: &rng) == 0 {
            doc.expirationDate = now.addingTimeInterval(Double(Int.random(in: -3...3, using: &rng)) * 3600)
        }
        return doc
    }

    static let searches = ["latte", "lat", "oat lat", "coffee", "creme", "brulee", "window", "状態", "kdiff", "wiki",
                           "アプ", "introduccion", "gat", "tea green", "x", "naive", "गतिविधि", "索引", "latte latte"]
    static let queries = [
        #"title == "latte"wc"#, #"title == "*e*""#, #"keywords == "coffee"c"#, #"domainIdentifier == "orders*""#,
        "rating >= 3", #"rating != "*""#, #"title == "Window"w"#, #"title == "lat* oat"tc"#,
        #"kind == "activity" || rating < 2"#, #"title == "brulee"wcd"#, #"contentDescription == "*""#,
        "InRange(rating, 1, 3)", #"title != "oat*"cd"#, #"title == "状態"w"#, "expirationDate > $time.now",
        #"domainIdentifier == "orders""#, #"keywords == "*""#, #"title == "Latte*"cd && keywords != "tea""#,
    ]

    @Test func randomOperationsAcrossTransactions() throws {
        var rng = SeededGenerator(seed: 20261122)
        let t = try TemporaryIndex()
        var model: [String: IndexDocument] = [:]  // "kind/identifier" → document
        var found = 0
        for round in 0..<14 {
            try t.write { w in
                for _ in 0..<Int.random(in: 1...40, using: &rng) {
                    let roll = Int.random(in: 0..<100, using: &rng)
                    let id = "d\(Int.random(in: 0..<45, using: &rng))"
                    if roll < 60 {
                        let doc = ExactnessTests.randomDocument(id, &rng)
                        try w.upsert(doc)
                        model["\(doc.kind)/\(doc.identifier)"] = doc
                    } else if roll < 98 {
                        let kind = Bool.random(using: &rng) ? "item" : "activity"
                        let removed = try w.remove(kind: kind, identifier: id)
                        #expect(removed == (model.removeValue(forKey: "\(kind)/\(id)") != nil))
                    } else if round % 5 == 4 {
                        try w.removeAll()
                        model.removeAll()
                    }
                }
                // Flushing more than once in a transaction is allowed.
                if round % 3 == 0 { try w.flush() }
            }
            found += try check(t, model, round: round)
        }
        // The comparisons were not vacuous.
        #expect(found > 500)
    }

    /// Over 2,000 results take another path (a scan of `ids` and of the
    /// expiration dates): the same answer.
    @Test func largeQueryResults() throws {
        var rng = SeededGenerator(seed: 99)
        let t = try TemporaryIndex()
        var docs: [IndexDocument] = []
        try t.write { w in
            for i in 0..<2_600 {
                let doc = ExactnessTests.randomDocument("n\(i)", &rng)
                try w.upsert(doc)
                docs.append(doc)
            }
        }
        let queries: [String] = [#"kind == "item""#, #"title == "*""#, #"title != "latte*"c"#, #"expirationDate != "*""#]
        for q in queries {
            let hits = try t.query(q, now: ExactnessTests.now)
            let expression = try QueryParser.parse(q, now: ExactnessTests.now)
            let live = docs.filter { !$0.isExpired(at: ExactnessTests.now) && BruteForce.matches($0, expression) }
            let unsorted = live.map { SearchHit(kind: $0.kind, identifier: $0.identifier, score: 0) }
            let expected = unsorted.sorted { a, b in a.identifier != b.identifier ? a.identifier < b.identifier : a.kind < b.kind }
            #expect(hits.count > 0)
            #expect(hits == expected, "\(q)")
        }
    }

    /// Returns how many hits the searches and queries found.
    func check(_ t: TemporaryIndex, _ model: [String: IndexDocument], round: Int) throws -> Int {
        var found = 0
        let stored = try t.environment.read { try t.index.documents(in: $0) }
        #expect(Dictionary(uniqueKeysWithValues: stored.map { ("\($0.kind)/\($0.identifier)", $0) }) == model, "round \(round)")

        // A fresh index of the model's documents: same statistics, same results, same scores.
        let fresh = try TemporaryIndex()
        try fresh.write { w in for key in model.keys.sorted() { try w.upsert(model[key]!) } }
        let a = try t.environment.read { try t.index.statistics(in: $0) }
        let b = try fresh.environment.read { try fresh.index.statistics(in: $0) }
        #expect(a.documentCount == b.documentCount, "round \(round)")
        #expect(a.totalLengths == b.totalLengths, "round \(round)")
        #expect(a.documentsWithField == b.documentsWithField, "round \(round)")

        var tokenizer = Tokenizer()
        for q in ExactnessTests.searches {
            let hits = try t.search(q, now: ExactnessTests.now, limit: 1000)
            found += hits.count
            let freshHits = try fresh.search(q, now: ExactnessTests.now, limit: 1000)
            #expect(hits == freshHits, "search \(q), round \(round)")
            // A small limit prunes; it must give the first hits of the full list.
            for limit in [1, 3, 7] {
                let top = try t.search(q, now: ExactnessTests.now, limit: limit)
                #expect(top == Array(hits.prefix(limit)), "search \(q) limit \(limit), round \(round)")
            }
            // Brute force: every word a term of the document, the last also as a prefix.
            var words = tokenizer.terms(q)
            let last = words.popLast()
            var expected = Set<String>()
            for doc in model.values where !doc.isExpired(at: ExactnessTests.now) {
                var terms = Set<String>()
                for (name, values) in doc.fields {
                    for v in values { terms.formUnion(tokenizer.indexTerms(v, keepWhole: name == "keywords")) }
                }
                if let last, words.allSatisfy(terms.contains), terms.contains(where: { $0.hasPrefix(last) }) {
                    expected.insert("\(doc.kind)/\(doc.identifier)")
                }
            }
            #expect(Set(hits.map { "\($0.kind)/\($0.identifier)" }) == expected, "search \(q), round \(round)")
            // Ordered by score, then identifier.
            for (x, y) in zip(hits, hits.dropFirst()) {
                let ordered = x.score > y.score || (x.score == y.score && x.identifier <= y.identifier)
                #expect(ordered)
            }
        }
        for q in ExactnessTests.queries {
            let hits = try t.query(q, now: ExactnessTests.now)
            found += hits.count
            let expression = try QueryParser.parse(q, now: ExactnessTests.now)
            let expected = model.values.filter { !$0.isExpired(at: ExactnessTests.now) && BruteForce.matches($0, expression) }
                .map { SearchHit(kind: $0.kind, identifier: $0.identifier, score: 0) }
                .sorted { a, b in a.identifier != b.identifier ? a.identifier < b.identifier : a.kind < b.kind }
            #expect(hits == expected, "query \(q), round \(round)")
        }
        return found
    }
}

/// The query language evaluated on one document, without any index.
enum BruteForce {
    static func matches(_ doc: IndexDocument, _ e: QueryExpression) -> Bool {
        switch e {
        case .and(let l, let r): return matches(doc, l) && matches(doc, r)
        case .or(let l, let r): return matches(doc, l) || matches(doc, r)
        case .compare(let name, .notEqual, let v): return !matches(doc, .compare(attribute: name, .equal, v))
        case .compare(let name, _, .string(let p)):
            if p.isPresenceTest { return hasValue(doc, name) }
            return strings(doc, name).contains { p.matches($0) }
        case .compare(let name, let op, .number(let n)):
            return numbers(doc, name).contains { compare($0, op, n) }
        case .compare(let name, let op, .date(let d)):
            return dates(doc, name).contains { compare($0.timeIntervalSinceReferenceDate, op, d.timeIntervalSinceReferenceDate) }
        case .inRange(let name, .number(let lo), .number(let hi)):
            return numbers(doc, name).contains { $0 >= lo && $0 <= hi }
        case .inRange(let name, .date(let lo), .date(let hi)):
            return dates(doc, name).contains { $0 >= lo && $0 <= hi }
        case .inRange: return false
        }
    }

    static func compare(_ a: Double, _ op: ComparisonOperator, _ b: Double) -> Bool {
        switch op {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .greater: a > b
        case .lessOrEqual: a <= b
        case .greaterOrEqual: a >= b
        }
    }

    static func strings(_ doc: IndexDocument, _ name: String) -> [String] {
        if let f = doc.fields[name] { return f }
        if case .strings(let s) = doc.attributes[name] { return s }
        if name == "kind" { return [doc.kind] }
        if name == "uniqueIdentifier" && doc.attributes[name] == nil { return [doc.identifier] }
        return []
    }

    static func numbers(_ doc: IndexDocument, _ name: String) -> [Double] {
        if case .numbers(let n) = doc.attributes[name] { return n }
        return []
    }

    static func dates(_ doc: IndexDocument, _ name: String) -> [Date] {
        if case .dates(let d) = doc.attributes[name] { return d }
        if name == "expirationDate", let e = doc.expirationDate { return [e] }
        return []
    }

    static func hasValue(_ doc: IndexDocument, _ name: String) -> Bool {
        !strings(doc, name).isEmpty || !numbers(doc, name).isEmpty || !dates(doc, name).isEmpty
    }
}
