import Foundation
import LMDB
import Testing
import TextIndex

/// The same calls into two fresh environments give byte-identical databases.
@Suite("Determinism")
struct DeterminismTests {
    static let names = ["ids", "docs", "terms", "postings", "blocks", "runs", "values", "masks", "meta"]

    /// Every key and value of the index's databases, in key order.
    static func dump(_ t: TemporaryIndex) throws -> [String: [([UInt8], [UInt8])]] {
        try t.environment.read { txn in
            var result: [String: [([UInt8], [UInt8])]] = [:]
            for name in names {
                let db = try txn.openDatabase("search." + name, as: [UInt8].self, [UInt8].self)
                let cursor = try db.cursor(in: txn)
                var rows: [([UInt8], [UInt8])] = []
                var entry = try cursor.firstBytes()
                while let e = entry {
                    rows.append(([UInt8](e.key), [UInt8](e.value)))
                    entry = try cursor.nextBytes()
                }
                result[name] = rows
            }
            return result
        }
    }

    func run(_ t: TemporaryIndex, seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        for _ in 0..<8 {
            try t.write { w in
                for _ in 0..<30 {
                    let id = "d\(Int.random(in: 0..<60, using: &rng))"
                    if Int.random(in: 0..<4, using: &rng) == 0 {
                        try w.remove(kind: "item", identifier: id)
                    } else {
                        var doc = ExactnessTests.randomDocument(id, &rng)
                        doc.kind = "item"
                        try w.upsert(doc)
                    }
                }
            }
        }
    }

    @Test func sameCallsGiveIdenticalBytes() throws {
        let a = try TemporaryIndex(), b = try TemporaryIndex()
        try run(a, seed: 7)
        try run(b, seed: 7)
        let da = try DeterminismTests.dump(a), db = try DeterminismTests.dump(b)
        for name in DeterminismTests.names {
            #expect(da[name]!.count == db[name]!.count, "\(name)")
            let same = da[name]!.elementsEqual(db[name]!) { x, y in x.0 == y.0 && x.1 == y.1 }
            #expect(same, "\(name)")
        }
        // 60 documents: all in the open block's runs.
        #expect(da["runs"]!.count > 5)
    }

    /// A document upserted twice with different fields, in one flush or in
    /// two: the space's field names are what was upserted either way, so a
    /// rebuild that groups the upserts otherwise writes the same bytes.
    @Test func replacedVersionsFieldNamesDoNotDependOnFlushes() throws {
        let one = try TemporaryIndex(), two = try TemporaryIndex()
        let first = IndexDocument.item("x", title: "first version"), second = IndexDocument.item("x", ["keywords": ["second"]])
        try one.write { w in
            try w.upsert(first)
            try w.upsert(second)
        }
        try two.write { w in try w.upsert(first) }
        try two.write { w in try w.upsert(second) }
        let a = try DeterminismTests.dump(one), b = try DeterminismTests.dump(two)
        for name in DeterminismTests.names {
            #expect(a[name]!.elementsEqual(b[name]!) { x, y in x.0 == y.0 && x.1 == y.1 }, "\(name)")
        }
        // Not vacuous: the first version's field is in the space's field names (meta "fields").
        #expect(a["meta"]!.contains { String(decoding: $0.1, as: UTF8.self).contains("title") })
    }

    @Test func preparedDocumentsWriteTheSameBytes() throws {
        let a = try TemporaryIndex(), b = try TemporaryIndex()
        var rng = SeededGenerator(seed: 11)
        let docs = (0..<300).map { ExactnessTests.randomDocument("d\($0 % 120)", &rng) }
        try a.write { w in for d in docs { try w.upsert(d) } }
        // Prepared on another thread, as a pipeline would.
        let prepared = try DispatchQueue.global().sync { try docs.map { try PreparedDocument($0) } }
        try b.write { w in for p in prepared { try w.upsert(p) } }
        let da = try DeterminismTests.dump(a), db = try DeterminismTests.dump(b)
        for name in DeterminismTests.names {
            let same = da[name]!.elementsEqual(db[name]!) { x, y in x.0 == y.0 && x.1 == y.1 }
            #expect(same, "\(name)")
        }
        #expect(throws: TextIndexError.self) { _ = try PreparedDocument(.item("")) }
    }

    @Test func stateDoesNotDependOnPastBatchesOnlyOnContent() throws {
        // Ids differ with history, but a document's stored record does not.
        let a = try TemporaryIndex()
        try a.write { w in try w.upsert(.item("x", title: "Oat latte", attributes: ["rating": .number(3)])) }
        let b = try TemporaryIndex()
        try b.write { w in try w.upsert(.item("x", title: "Oat latte", attributes: ["rating": .number(3)])) }
        let da = try DeterminismTests.dump(a)["docs"]!, db = try DeterminismTests.dump(b)["docs"]!
        let same = da.elementsEqual(db) { x, y in x.1 == y.1 }
        #expect(same)
    }
}
