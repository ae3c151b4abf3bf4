import Foundation
import LMDB
import Testing
import TextIndex

/// The attribute index (`values`: one key per attribute value and postings
/// block, its documents as offsets: a list under 256, a bitmap from 256)
/// answers exactly as a scan of the documents does, across blocks and
/// across both forms, while documents come, change values and go.
@Suite("Attribute index")
struct AttributeIndexTests {
    static let now = TemporaryIndex.now
    static let domains = ["orders", "desserts", "orders.2024", "travel"]

    /// A document whose attribute values come from `rng`: sometimes many
    /// documents of a block share a value (a bitmap), sometimes few (a list).
    static func document(_ i: Int, _ rng: inout SeededGenerator, domains: [String]) -> IndexDocument {
        var doc = IndexDocument(kind: Int.random(in: 0..<10, using: &rng) == 0 ? "activity" : "item", identifier: "n\(i)")
        doc.fields["title"] = ["latte \(i % 7)"]
        doc.attributes["domainIdentifier"] = .string(domains.randomElement(using: &rng)!)
        if Bool.random(using: &rng) { doc.attributes["rating"] = .numbers([Double(Int.random(in: 0...5, using: &rng))]) }
        if Int.random(in: 0..<3, using: &rng) == 0 {
            doc.expirationDate = now.addingTimeInterval(Double(Int.random(in: -2...2, using: &rng)) * 3600)
        }
        return doc
    }

    static let queries = [
        #"kind == "item""#, #"kind == "activity""#, #"domainIdentifier == "orders""#, #"domainIdentifier == "orders*""#,
        #"domainIdentifier == "desserts" || rating >= 4"#, "rating == 2", "InRange(rating, 1, 3)",
        #"domainIdentifier != "travel""#, #"rating != "*""#, "expirationDate > $time.now", #"uniqueIdentifier == "n42""#,
        #"uniqueIdentifier == "n9*""#, #"domainIdentifier == "*" && kind == "activity""#,
    ]

    @Test("queries over three blocks equal a scan, as values move between a list and a bitmap and keys empty")
    func acrossBlocks() throws {
        var rng = SeededGenerator(seed: 2026_11_24)
        let t = try TemporaryIndex()
        var model: [String: IndexDocument] = [:]
        // 9,000 documents: blocks 0, 1 and part of 2; every domain has far
        // more than 256 documents a block (bitmaps).
        for part in 0..<3 {
            try t.write { w in
                for i in part * 3_000..<(part + 1) * 3_000 {
                    let doc = AttributeIndexTests.document(i, &rng, domains: AttributeIndexTests.domains)
                    try w.upsert(doc)
                    model["\(doc.kind)/\(doc.identifier)"] = doc
                }
            }
        }
        try check(t, model, "after the upserts")

        // Most documents change domain to one of two, "desserts" goes
        // entirely, and many documents go: bitmaps become lists, and a
        // value that loses its last document in a block loses its key.
        try t.write { w in
            for (key, doc) in model.sorted(by: { $0.key < $1.key }) {
                let roll = Int.random(in: 0..<10, using: &rng)
                if roll < 6 || doc.attributes["domainIdentifier"] == .string("desserts") {
                    #expect(try w.remove(kind: doc.kind, identifier: doc.identifier))
                    model[key] = nil
                } else if roll < 9 {
                    var moved = doc
                    moved.attributes["domainIdentifier"] = .string(roll == 6 ? "orders" : "travel")
                    try w.upsert(moved)
                    model[key] = moved
                }
            }
        }
        try check(t, model, "after removals and moves")
        #expect(try t.query(#"domainIdentifier == "desserts""#).isEmpty)
        #expect(try storedKeys(t, containing: "desserts") == 0)

        // The value that lost its keys comes back, 600 documents in one block.
        try t.write { w in
            for i in 9_000..<9_600 {
                let doc = AttributeIndexTests.document(i, &rng, domains: ["desserts"])
                try w.upsert(doc)
                model["\(doc.kind)/\(doc.identifier)"] = doc
            }
        }
        try check(t, model, "after new documents")
        #expect(try storedKeys(t, containing: "desserts") > 0)
    }

    /// Every query's hits equal the model's documents that match it.
    func check(_ t: TemporaryIndex, _ model: [String: IndexDocument], _ when: Comment) throws {
        var found = 0
        for q in AttributeIndexTests.queries {
            let hits = try t.query(q, now: AttributeIndexTests.now)
            let expression = try QueryParser.parse(q, now: AttributeIndexTests.now)
            let expected = model.values
                .filter { !$0.isExpired(at: AttributeIndexTests.now) && BruteForce.matches($0, expression) }
                .map { SearchHit(kind: $0.kind, identifier: $0.identifier, score: 0) }
                .sorted { a, b in a.identifier != b.identifier ? a.identifier < b.identifier : a.kind < b.kind }
            #expect(hits == expected, "query \(q), \(when)")
            found += hits.count
        }
        #expect(found > 1_000, "the comparisons were not vacuous, \(when)")
    }

    /// How many keys of `search.values` contain `text`'s bytes.
    func storedKeys(_ t: TemporaryIndex, containing text: String) throws -> Int {
        let needle = Array(text.utf8)
        return try t.environment.read { txn in
            let values: Database<[UInt8], [UInt8]> = try txn.openDatabase("search.values")
            let cursor = try values.cursor(in: txn)
            var n = 0
            var entry = try cursor.firstBytes()
            while let e = entry {
                let key = [UInt8](e.key)
                if key.count >= needle.count,
                   (0...(key.count - needle.count)).contains(where: { key[$0..<($0 + needle.count)].elementsEqual(needle) }) {
                    n += 1
                }
                entry = try cursor.nextBytes()
            }
            return n
        }
    }
}
