import Foundation
import LMDB
import Testing
import TextIndex

@Suite("Free-text search")
struct SearchTests {
    @Test func everyWordMustMatchTheLastAsPrefix() throws {
        let t = try TemporaryIndex()
        try t.write { w in
            try w.upsert(.item("a", title: "Oat latte", ["keywords": ["coffee"]]))
            try w.upsert(.item("b", title: "Latte macchiato"))
            try w.upsert(.item("c", title: "Green tea", ["contentDescription": ["no coffee here"]]))
        }
        #expect(Set(t.ids(try t.search("latte"))) == ["a", "b"])
        #expect(t.ids(try t.search("oat lat")) == ["a"])
        #expect(t.ids(try t.search("lat oat")) == [])  // "lat" is not last: exact only
        #expect(Set(t.ids(try t.search("coff"))) == ["a", "c"])
        #expect(t.ids(try t.search("COFFEE tea")) == ["c"])
        #expect(try t.search("").isEmpty)
        #expect(try t.search("zzz").isEmpty)
    }

    @Test func titleOutranksDisplayNameOutranksDescription() throws {
        let t = try TemporaryIndex()
        try t.write { w in
            try w.upsert(.item("desc", title: "x", ["contentDescription": ["spotlight"]]))
            try w.upsert(.item("name", title: "y", ["displayName": ["spotlight"]]))
            try w.upsert(.item("title", title: "spotlight"))
        }
        #expect(t.ids(try t.search("spotlight")) == ["title", "name", "desc"])
    }

    @Test func tiesAreOrderedByIdentifierAndLimitApplies() throws {
        let t = try TemporaryIndex()
        try t.write { w in
            for id in ["d", "b", "a", "c", "e"] { try w.upsert(.item(id, title: "same")) }
        }
        #expect(t.ids(try t.search("same")) == ["a", "b", "c", "d", "e"])
        #expect(t.ids(try t.search("same", limit: 2)) == ["a", "b"])
    }

    @Test("ties are ordered by the identifier's UTF-8 bytes, then the kind's, not by Swift's string order")
    func tiesAreOrderedByUTF8Bytes() throws {
        let t = try TemporaryIndex()
        // "e\u{301}" and "é" are equal as Swift strings; their bytes differ
        // (65 CC 81, C3 A9), as do "Z" (5A) and "a" (61).
        let ids = ["é", "z", "e\u{301}", "a", "Z"]
        try t.write { w in
            for id in ids { try w.upsert(.item(id, title: "same")) }
            try w.upsert(IndexDocument(kind: "note", identifier: "a", fields: ["title": ["same"]]))
            try w.upsert(IndexDocument(kind: "file", identifier: "z", fields: ["title": ["same"]]))
        }
        let hits = try t.search("same")
        #expect(hits.map { Array($0.identifier.utf8) } == ["Z", "a", "a", "e\u{301}", "z", "z", "é"].map { Array($0.utf8) })
        #expect(hits.map(\.kind) == ["item", "item", "note", "item", "file", "item", "item"])
        #expect(Set(hits.map(\.score)).count == 1)
        // A limit inside the ties keeps the head of that order.
        #expect(try t.search("same", limit: 3).map(\.kind) == ["item", "item", "note"])
    }

    @Test("many ties (more than the few sorted by insertion) are ordered the same way")
    func manyTiesAreOrderedByUTF8Bytes() throws {
        let t = try TemporaryIndex()
        // 150 identifiers in a scrambled order, two kinds each, with
        // canonically equal pairs among them.
        var ids: [String] = []
        for n in 0..<75 { ids += ["k\((n * 37) % 75)", n % 5 == 0 ? "e\u{301}\(n)" : "é\(n)"] }
        try t.write { w in
            for id in ids {
                try w.upsert(.item(id, title: "same"))
                try w.upsert(IndexDocument(kind: "note", identifier: id, fields: ["title": ["same"]]))
            }
        }
        let expected = ids.flatMap { [(Array($0.utf8), "item"), (Array($0.utf8), "note")] }.sorted { a, b in
            a.0 != b.0 ? a.0.lexicographicallyPrecedes(b.0) : a.1 < b.1
        }
        for limit in [20, 150, 300] {
            let hits = try t.search("same", limit: limit)
            #expect(hits.count == limit)
            #expect(hits.map { Array($0.identifier.utf8) } == expected.prefix(limit).map(\.0))
            #expect(hits.map(\.kind) == expected.prefix(limit).map(\.1))
        }
    }

    @Test func expiredDocumentsAreLeftOut() throws {
        let t = try TemporaryIndex()
        let now = TemporaryIndex.now
        try t.write { w in
            try w.upsert(.item("old", title: "news", expires: now))
            try w.upsert(.item("new", title: "news", expires: now.addingTimeInterval(1)))
            try w.upsert(.item("forever", title: "news"))
        }
        #expect(t.ids(try t.search("news", now: now)) == ["forever", "new"])
        #expect(t.ids(try t.search("news", now: now.addingTimeInterval(-1))) == ["forever", "new", "old"])
    }

    @Test func replaceAndRemoveChangeResults() throws {
        let t = try TemporaryIndex()
        try t.write { w in try w.upsert(.item("a", title: "alpha")) }
        try t.write { w in try w.upsert(.item("a", title: "beta")) }
        #expect(try t.search("alpha").isEmpty)
        #expect(t.ids(try t.search("beta")) == ["a"])
        try t.write { w in
            let removed = try w.remove(kind: "item", identifier: "a")
            #expect(removed)
        }
        #expect(try t.search("beta").isEmpty)
        try t.write { w in
            let removed = try w.remove(kind: "item", identifier: "a")
            #expect(!removed)
        }
        let stats = try t.environment.read { try t.index.statistics(in: $0) }
        #expect(stats.documentCount == 0)
        #expect(stats.totalLengths.allSatisfy { $0 == 0 })
    }

    @Test func keywordsAreAlsoKeptWhole() throws {
        let t = try TemporaryIndex()
        try t.write { w in try w.upsert(.item("g", title: "0ad", ["keywords": ["game::strategy"]])) }
        #expect(t.ids(try t.search("strategy")) == ["g"])
        #expect(t.ids(try t.search("game::strategy")) == ["g"])
        #expect(t.ids(try t.query(#"keywords == "game::strategy""#)) == ["g"])
    }

    @Test func identifiersAreChecked() throws {
        let t = try TemporaryIndex()
        try t.write { w in
            #expect(throws: TextIndexError.self) { try w.upsert(.item("")) }
            #expect(throws: TextIndexError.self) { try w.upsert(.item(String(repeating: "x", count: 257))) }
            try w.upsert(.item(String(repeating: "x", count: 256), title: "ok"))
            #expect(throws: TextIndexError.self) { try w.upsert(.item("a", ["kind": ["x"]])) }
            #expect(throws: TextIndexError.self) { try w.upsert(.item("a", attributes: ["expirationDate": .number(1)])) }
            #expect(throws: TextIndexError.self) { try w.upsert(.item("a", ["title": ["x"]], attributes: ["title": .number(1)])) }
            #expect(throws: TextIndexError.self) { try w.upsert(.item("a", [String(repeating: "n", count: 65): ["x"]])) }
        }
        #expect(try t.search("ok").count == 1)
    }
}

@Suite("A damaged index")
struct DamagedIndexTests {
    @Test("statistics smaller than the stored documents: replacing a document is a corrupt-index error, not a trap")
    func statisticsUnderflow() throws {
        let temporary = try TemporaryIndex()
        try temporary.write { try $0.upsert(.item("a", title: "oat latte")) }
        // Statistics as a damaged view or a bad snapshot could hold them: no documents.
        try temporary.environment.write { txn in
            // The index as opened is space 0: its meta keys start with four zero bytes.
            let meta: Database<[UInt8], [UInt8]> = try txn.openDatabase("search.meta")
            let key: [UInt8] = [0, 0, 0, 0] + Array("stats".utf8)
            var stats = try #require(try meta.get(key, in: txn))
            for i in 5..<stats.count { stats[i] = 0 }   // past format and next id: every count 0
            try meta.put(stats, forKey: key, in: txn)
        }
        #expect(throws: TextIndexError.self) {
            try temporary.write { try $0.upsert(.item("a", title: "flat white")) }
        }
    }

    @Test("a damaged page of ids is an error naming search.ids for a lookup, a pattern and a write, which writes nothing")
    func damagedIdentityPage() throws {
        let t = try TemporaryIndex()
        try t.write { w in for n in 0..<20 { try w.upsert(.item("order-\(n)", title: "oat latte")) } }
        // The one page: its first value, then a key that shares more bytes than the key before it has.
        try t.environment.write { txn in
            let ids: Database<[UInt8], [UInt8]> = try txn.openDatabase("search.ids")
            let page = try #require(try ids.cursor(in: txn).firstBytes())
            try ids.put([1, 0, 90, 1, 0x41, 1, 1], forKey: [UInt8](page.key), in: txn)
        }
        let isIdsError = { (error: any Error) in "\(error)".contains("damaged page in database search.ids") }
        #expect(performing: { try t.query(#"uniqueIdentifier == "order-1*""#) }, throws: isIdsError)
        #expect(performing: { try t.environment.read { txn in try t.index.document(kind: "item", identifier: "order-3", in: txn) } },
                throws: isIdsError)
        let before = try t.environment.read { txn in try t.index.statistics(in: txn) }
        #expect(performing: { try t.write { try $0.upsert(.item("order-99", title: "flat white")) } }, throws: isIdsError)
        #expect(try t.environment.read { txn in try t.index.statistics(in: txn) } == before)
    }

    @Test("a search that fails on a damaged postings value part-way leaves the searches after it unchanged (its scoring scratch is not reused)")
    func failedSearchLeavesNoTrace() throws {
        let t = try TemporaryIndex()
        try t.write { w in
            try w.upsert(.item("a", title: "zebra crossing"))
            try w.upsert(.item("b", title: "zebra zebra crossing"))
            try w.upsert(.item("c", title: "crossing"))
        }
        let before = try t.search("crossing")
        #expect(before.count == 3)
        // The one run has one page: make zebra's document count 127 where
        // its value holds 2, so that scoring decodes a and b, then runs out.
        try t.environment.write { txn in
            let runs: Database<[UInt8], [UInt8]> = try txn.openDatabase("search.runs")
            let cursor = try runs.cursor(in: txn)
            let page = try #require(try cursor.firstBytes())
            #expect(try cursor.nextBytes() == nil, "one page")
            let key = [UInt8](page.key)
            var bytes = [UInt8](page.value)
            // `RunPage`: varint n (under 128 here), u32 restarts, then per
            // entry: shared, suffix length, suffix, value length, value
            // (all lengths under 128 here: one byte each).
            let count = Int(bytes[0])
            var at = 1 + 4 * ((count + 15) / 16)
            var term: [UInt8] = []
            var damaged = false
            for _ in 0..<count {
                let shared = Int(bytes[at]), suffix = Int(bytes[at + 1])
                term = Array(term.prefix(shared)) + bytes[(at + 2)..<(at + 2 + suffix)]
                at += 2 + suffix
                let length = Int(bytes[at])
                if term.elementsEqual("zebra".utf8) {
                    #expect(bytes[at + 1] == 2)
                    bytes[at + 1] = 127
                    damaged = true
                }
                at += 1 + length
            }
            #expect(damaged)
            try runs.put(bytes, forKey: key, in: txn)
        }
        #expect(throws: TextIndexError.self) { try t.search("zebra") }
        let after = try t.search("crossing")
        #expect(after.map(\.identifier) == before.map(\.identifier))
        #expect(after.map(\.score) == before.map(\.score))
    }
}
