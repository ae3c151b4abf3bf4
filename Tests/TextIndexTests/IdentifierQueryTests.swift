import Foundation
import LMDB
import Testing
@testable import TextIndex

/// `uniqueIdentifier` in the query language is the document's identifier
/// unless the document gives the name itself; the identifier is read from
/// `ids`, not from the attribute index (keyword projection version 9). These
/// queries answer exactly as a scan of the documents does, for identifiers
/// whose bytes differ from their NFC form, for every modifier, and for
/// documents that give `uniqueIdentifier` as an attribute (a value, other
/// types, none) or a field.
@Suite("Identifier queries")
struct IdentifierQueryTests {
    static let identifiers = [
        "Kelvin", "\u{212A}elvin", "kelvin", "KELVIN", "éclair", "e\u{0301}clair", "eclair", "Éclair",
        "a;b", "a\u{037E}b", "`x", "\u{1FEF}x", "order-1", "order-10", "order-2", "Order-3", "ORDER-4",
        "straße", "STRASSE", "ﬁle", "file", "İstanbul", "istanbul", "日本語", "n42", "n420", "n9",
        "MyWindowClass", "my window class", "x*y", "zz",
    ]

    static func documents() -> [IndexDocument] {
        var docs: [IndexDocument] = []
        for (i, id) in identifiers.enumerated() {
            var doc = IndexDocument(kind: i % 3 == 0 ? "activity" : "item", identifier: id)
            doc.attributes["domainIdentifier"] = .string(i % 2 == 0 ? "orders" : "travel")
            docs.append(doc)
            // The same identifier under a second kind, for some.
            if i % 4 == 1 { docs.append(IndexDocument(kind: "note", identifier: id)) }
        }
        // Documents that give the name themselves.
        var given = IndexDocument(kind: "item", identifier: "given-string")
        given.attributes["uniqueIdentifier"] = .strings(["order-77", "Kelvin-given"])
        docs.append(given)
        var number = IndexDocument(kind: "item", identifier: "order-number")
        number.attributes["uniqueIdentifier"] = .numbers([7])
        docs.append(number)
        var empty = IndexDocument(kind: "item", identifier: "order-empty")
        empty.attributes["uniqueIdentifier"] = .strings([])
        docs.append(empty)
        return docs
    }

    static let queries = [
        #"uniqueIdentifier == "Kelvin""#, #"uniqueIdentifier == "K*""#, #"uniqueIdentifier == "kelvin"c"#,
        #"uniqueIdentifier == "K*"c"#, #"uniqueIdentifier == "éclair""#, #"uniqueIdentifier == "é*""#,
        #"uniqueIdentifier == "eclair"d"#, #"uniqueIdentifier == "ECLAIR"cd"#, #"uniqueIdentifier == "a;b""#,
        #"uniqueIdentifier == "a;*""#, #"uniqueIdentifier == "`x""#, #"uniqueIdentifier == "order-1*""#,
        #"uniqueIdentifier == "order-*"c"#, #"uniqueIdentifier == "*der-*""#, #"uniqueIdentifier == "*""#,
        #"uniqueIdentifier != "*""#, #"uniqueIdentifier != "order*""#, #"uniqueIdentifier == "strasse"c"#,
        #"uniqueIdentifier == "file""#, #"uniqueIdentifier == "file"c"#, #"uniqueIdentifier == "istanbul"cd"#,
        #"uniqueIdentifier == "日本*""#, #"uniqueIdentifier == "n4*""#, #"uniqueIdentifier == "n4""#,
        #"uniqueIdentifier == "window"w"#, #"uniqueIdentifier == "window class"t"#,
        #"uniqueIdentifier == "order-77""#, #"uniqueIdentifier == "given-string""#, #"uniqueIdentifier == "zz*""#,
        #"uniqueIdentifier == "order-*" && domainIdentifier == "orders""#, #"kind == "note" && uniqueIdentifier == "*lair""#,
        #"uniqueIdentifier == "zzz""#,
    ]

    @Test("identifier queries equal a scan of the documents, through upserts and removals")
    func equalsScan() throws {
        let t = try TemporaryIndex()
        var model: [[UInt8]: IndexDocument] = [:]
        try t.write { w in
            for doc in IdentifierQueryTests.documents() {
                try w.upsert(doc)
                model[IdentifierQueryTests.bytes(doc.kind, doc.identifier)] = doc
            }
        }
        try check(t, model, "after the upserts")
        // The attribute index holds no key of an identifier: the marks of the
        // three documents that give the name, and the values one of them gives.
        #expect(try attributeKeys(t, named: "uniqueIdentifier") == ["e", "n", "s"])
        #expect(try storedStringValues(t, named: "uniqueIdentifier") == ["kelvin-given", "order-77"])

        try t.write { w in
            #expect(try w.remove(kind: "item", identifier: "\u{212A}elvin"))
            #expect(try w.remove(kind: "item", identifier: "order-empty"))
            var renamed = IndexDocument(kind: "item", identifier: "order-number")
            renamed.attributes["uniqueIdentifier"] = .string("Kelvin-renamed")
            try w.upsert(renamed)
            try w.upsert(IndexDocument(kind: "item", identifier: "given-string"))   // no longer gives it
        }
        model[IdentifierQueryTests.bytes("item", "\u{212A}elvin")] = nil
        model[IdentifierQueryTests.bytes("item", "order-empty")] = nil
        var renamed = IndexDocument(kind: "item", identifier: "order-number")
        renamed.attributes["uniqueIdentifier"] = .string("Kelvin-renamed")
        model[IdentifierQueryTests.bytes("item", "order-number")] = renamed
        model[IdentifierQueryTests.bytes("item", "given-string")] = IndexDocument(kind: "item", identifier: "given-string")
        try check(t, model, "after removals and changes")
        #expect(try attributeKeys(t, named: "uniqueIdentifier") == ["e", "s"])
        #expect(try storedStringValues(t, named: "uniqueIdentifier") == ["kelvin-renamed"])
    }

    @Test("a document that gives uniqueIdentifier as a text field answers with it")
    func givenAsField() throws {
        let t = try TemporaryIndex()
        var model: [[UInt8]: IndexDocument] = [:]
        var field = IndexDocument(kind: "item", identifier: "plain-1")
        field.fields["uniqueIdentifier"] = ["Order Seven"]
        let docs = [field, IndexDocument(kind: "item", identifier: "order-seven"), IndexDocument(kind: "item", identifier: "plain-2")]
        try t.write { w in for d in docs { try w.upsert(d); model[IdentifierQueryTests.bytes("item", d.identifier)] = d } }
        try check(t, model, "with a field", atLeast: 3)
    }

    /// The seek bound of ``QueryEvaluator/identifierSeekPrefix(_:)`` rests on
    /// this: the NFC form (as the index folds it) of a scalar outside ASCII
    /// holds an ASCII byte only for these three.
    @Test("only U+037E, U+1FEF and U+212A have an NFC form with ASCII in it")
    func nfcToASCII() {
        var found: [UInt32] = []
        for v in UInt32(0x80)...0x10FFFF {
            guard let scalar = Unicode.Scalar(v) else { continue }
            let folded = TextFolding.fold(String(Character(scalar)))
            if folded.utf8.contains(where: { $0 < 0x80 }) { found.append(v) }
        }
        #expect(found == [0x037E, 0x1FEF, 0x212A])
    }

    @Test("the seek bound stops at the first byte that NFC may have made")
    func seekPrefix() {
        #expect(QueryEvaluator.identifierSeekPrefix(StringPattern("order-1*")) == Array("order-1".utf8))
        #expect(QueryEvaluator.identifierSeekPrefix(StringPattern("abKc")) == Array("ab".utf8))
        #expect(QueryEvaluator.identifierSeekPrefix(StringPattern("a;b")) == Array("a".utf8))
        #expect(QueryEvaluator.identifierSeekPrefix(StringPattern("x`y")) == Array("x".utf8))
        #expect(QueryEvaluator.identifierSeekPrefix(StringPattern("abé")) == Array("ab".utf8))
        #expect(QueryEvaluator.identifierSeekPrefix(StringPattern("*ab")).isEmpty)
        #expect(QueryEvaluator.identifierSeekPrefix(StringPattern("ab", modifiers: "c")).isEmpty)
        #expect(QueryEvaluator.identifierSeekPrefix(StringPattern("ab", modifiers: "d")).isEmpty)
        #expect(QueryEvaluator.identifierSeekPrefix(StringPattern("ab", modifiers: "w")).isEmpty)
    }

    /// Every query's hits equal the model's documents that match it.
    /// A hit's kind and identifier as bytes (Swift's `String` equality is
    /// canonical equivalence: `éclair` precomposed and decomposed are equal).
    static func bytes(_ kind: String, _ identifier: String) -> [UInt8] {
        Array(kind.utf8) + [0] + Array(identifier.utf8)
    }

    /// (Compared as sets: the order of hits of several kinds is not what this suite is about.)
    func check(_ t: TemporaryIndex, _ model: [[UInt8]: IndexDocument], _ when: Comment, atLeast: Int = 50) throws {
        var found = 0
        for q in IdentifierQueryTests.queries {
            let hits = try t.query(q)
            let expression = try QueryParser.parse(q, now: TemporaryIndex.now)
            let expected = model.values
                .filter { !$0.isExpired(at: TemporaryIndex.now) && BruteForce.matches($0, expression) }
                .map { IdentifierQueryTests.bytes($0.kind, $0.identifier) }
            let got = hits.map { IdentifierQueryTests.bytes($0.kind, $0.identifier) }
            #expect(got.count == Set(got).count, "query \(q), \(when): a hit twice")
            #expect(Set(got) == Set(expected), "query \(q), \(when)")
            found += hits.count
        }
        #expect(found > atLeast, "the comparisons were not vacuous, \(when)")
    }

    /// The string values of the attribute index's keys of `name`, distinct, sorted.
    func storedStringValues(_ t: TemporaryIndex, named name: String) throws -> [String] {
        let prefix = Array(name.utf8) + [0, UInt8(ascii: "s")]
        return try t.environment.read { txn in
            let values: Database<[UInt8], [UInt8]> = try txn.openDatabase("search.values")
            let cursor = try values.cursor(in: txn)
            var found = Set<String>()
            var entry = try cursor.firstBytes()
            while let e = entry {
                let key = Array([UInt8](e.key)[4...])
                if key.starts(with: prefix) {
                    // name 0x00 's' value 0x00 u32 block
                    found.insert(String(decoding: key[prefix.count..<(key.count - 5)], as: UTF8.self))
                }
                entry = try cursor.nextBytes()
            }
            return found.sorted()
        }
    }

    /// The types (the byte after `name 0x00`) of the attribute index's keys of `name`, distinct, sorted.
    func attributeKeys(_ t: TemporaryIndex, named name: String) throws -> [String] {
        let prefix = Array(name.utf8) + [0]
        return try t.environment.read { txn in
            let values: Database<[UInt8], [UInt8]> = try txn.openDatabase("search.values")
            let cursor = try values.cursor(in: txn)
            var types = Set<String>()
            var entry = try cursor.firstBytes()
            while let e = entry {
                let key = [UInt8](e.key)[4...]
                if key.starts(with: prefix) { types.insert(String(UnicodeScalar(key[key.startIndex + prefix.count]))) }
                entry = try cursor.nextBytes()
            }
            return types.sorted()
        }
    }
}
