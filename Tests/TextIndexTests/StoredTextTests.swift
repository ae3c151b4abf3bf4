import Foundation
import LMDB
import Testing
import TextIndex

/// The index keeps each document's text once (database `docs`): a replaced
/// or removed document's postings are found by tokenizing that text again,
/// which is exact only with the tokenizer that indexed it, so each space
/// records its tokenizer and refuses to change under another.
@Suite("Text kept once")
struct StoredTextTests {
    static func stamp(_ t: TemporaryIndex, space: UInt32 = 0) throws -> [UInt8]? {
        let key = withUnsafeBytes(of: space.bigEndian) { Array($0) } + Array("tokenizer".utf8)
        return try DeterminismTests.dump(t)["meta"]!.first { $0.0 == key }?.1
    }

    @Test("no term lists are stored; replaces and removals leave exactly what a fresh index holds")
    func noTermLists() throws {
        var rng = SeededGenerator(seed: 31)
        let t = try TemporaryIndex()
        var model: [String: IndexDocument] = [:]
        for _ in 0..<6 {
            try t.write { w in
                for _ in 0..<120 {
                    let id = "d\(Int.random(in: 0..<80, using: &rng))"
                    if Int.random(in: 0..<5, using: &rng) == 0 {
                        if try w.remove(kind: "item", identifier: id) { model[id] = nil }
                    } else {
                        var doc = ExactnessTests.randomDocument(id, &rng)
                        doc.kind = "item"
                        try w.upsert(doc)
                        model[id] = doc
                    }
                }
            }
        }
        let fresh = try TemporaryIndex()
        try fresh.write { w in for id in model.keys.sorted() { try w.upsert(model[id]!) } }
        let a = try DeterminismTests.dump(t), b = try DeterminismTests.dump(fresh)
        #expect(a["terms"]!.isEmpty && b["terms"]!.isEmpty)
        // The same postings (by term and document, whatever the ids) show as the same answers and scores.
        try RunTests.expectSameSearches(t, fresh)
        #expect(try t.environment.read { try t.index.statistics(in: $0) }.documentCount == UInt64(model.count))
    }

    @Test("documents whose caller keeps their content: docs holds the reference, and every answer is the same")
    func contentKeptByCaller() throws {
        // The caller's store: each version of a document under its own reference.
        let kept = Locked<[[UInt8]: IndexDocument]>([:])
        let t = try TemporaryIndex(contentReader: { reference, _ in
            guard let doc = kept.value[[UInt8](reference)] else { throw TextIndexError.corrupt("no content under this reference") }
            return (doc.fields, doc.attributes)
        })
        let plain = try TemporaryIndex()
        var rng = SeededGenerator(seed: 47)
        var version = 0
        for _ in 0..<5 {
            var upserts: [IndexDocument] = [], removals: [String] = []
            for _ in 0..<150 {
                let id = "d\(Int.random(in: 0..<90, using: &rng))"
                if Int.random(in: 0..<6, using: &rng) == 0 {
                    removals.append(id)
                } else {
                    var doc = ExactnessTests.randomDocument(id, &rng)
                    doc.kind = "item"
                    upserts.append(doc)
                }
            }
            for (target, byReference) in [(t, true), (plain, false)] {
                try target.write { w in
                    for var doc in upserts {
                        if byReference {
                            version += 1
                            doc.contentReference = Array("v\(version)".utf8)
                            kept.withValue { $0[doc.contentReference!] = doc }
                        }
                        try w.upsert(doc)
                    }
                    for id in removals { _ = try w.remove(kind: "item", identifier: id) }
                }
            }
        }
        try RunTests.expectSameSearches(t, plain)
        let documents = try t.environment.read { try t.index.documents(in: $0) }
        #expect(documents.map { var d = $0; d.contentReference = nil; return d }
                == (try plain.environment.read { try plain.index.documents(in: $0) }))
        // The stored records hold the header and the reference, not the text.
        // (Pages of 128 records, each with a 2-byte offset: under 42 bytes a document.)
        let stored = try DeterminismTests.dump(t)["docs"]!
        #expect(!stored.isEmpty && stored.reduce(0) { $0 + $1.1.count } < 42 * documents.count)
        // Read without a content source: a clear error, not an empty document.
        var blind = t.index
        blind.contentReader = nil
        let first = try #require(documents.first)
        #expect(throws: TextIndexError.noContentSource(identifier: first.identifier)) {
            try t.environment.read { try blind.document(kind: first.kind, identifier: first.identifier, in: $0) }
        }
    }

    @Test("each space records its tokenizer; another one's index is refused, nothing written")
    func tokenizerStamp() throws {
        let t = try TemporaryIndex()
        #expect(try StoredTextTests.stamp(t) == nil)
        try t.write { w in try w.upsert(.item("a", title: "Oat latte")) }
        #expect(try StoredTextTests.stamp(t) == Array(Tokenizer.identity.utf8))
        // The stamp and the projection's version agree: what changes one changes the other (a rebuild, not refused writes).
        let n = Tokenizer.identityNumber
        #expect(Tokenizer.identity == "ICU \(n / 100 % 1000).\(n % 100), rules \(n / 100_000)")
        #expect(Tokenizer.icuVersion.hasPrefix("\(n / 100 % 1000).\(n % 100)"))
        // As if the index had been built with another ICU.
        try t.environment.write { txn in
            let meta = try txn.openDatabase("search.meta", as: [UInt8].self, [UInt8].self)
            try meta.put(Array("ICU 1.0, rules 1".utf8), forKey: [0, 0, 0, 0] + Array("tokenizer".utf8), in: txn)
        }
        let before = try DeterminismTests.dump(t)
        #expect(throws: TextIndexError.tokenizerChanged(stored: "ICU 1.0, rules 1", current: Tokenizer.identity)) {
            try t.write { w in try w.upsert(.item("a", title: "Chai")) }
        }
        #expect(throws: TextIndexError.self) { try t.write { w in try w.remove(kind: "item", identifier: "a") } }
        let after = try DeterminismTests.dump(t)
        for name in DeterminismTests.names {
            #expect(before[name]!.elementsEqual(after[name]!) { $0.0 == $1.0 && $0.1 == $1.1 }, "\(name)")
        }
        // Another space has its own stamp, written at its first flush.
        try t.environment.write { txn in
            let w = t.index.space(3).writer(in: txn)
            try w.upsert(.item("a", title: "Chai"))
            try w.flush()
        }
        #expect(try StoredTextTests.stamp(t, space: 3) == Array(Tokenizer.identity.utf8))
        #expect(TextIndexError.tokenizerChanged(stored: "ICU 1.0, rules 1", current: "ICU 72.1, rules 1").description
                == "the text index was built with ICU 1.0, rules 1 and this process tokenizes with ICU 72.1, rules 1: rebuild the index (eventlog replay)")
    }
}
