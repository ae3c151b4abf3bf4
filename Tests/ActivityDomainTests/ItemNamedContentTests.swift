import EventLog
import Foundation
import LMDB
import SwiftProtobuf
import Testing
import TextIndex
@testable import ActivityDomain

/// A query's check of a candidate item reads one name from the item's wire
/// bytes (``ItemNamedContent``) instead of decoding the whole item: it must
/// give exactly what the whole decode and ``SearchDocuments/item(_:)`` give.
@Suite("One name of an item, read from its bytes")
struct ItemNamedContentTests {
    /// Every name the query language accepts, and names an item never has.
    static let names = TextIndex.standardQueryAttributes.sorted() + ["thumbnailData", "user", "", "Title"]

    /// What the whole decode gives under `name`, or nil when it throws.
    static func whole(_ name: String, _ bytes: [UInt8]) -> NamedContent? {
        guard let item = try? Activitylog_V1_SearchableItem(serializedBytes: bytes) else { return nil }
        let doc = SearchDocuments.item(item)
        return NamedContent(name, in: (doc.fields, doc.attributes))
    }

    /// What the wire walk gives, falling back to the whole decode where it
    /// does (as ``ItemContentReference/namedContent(_:_:in:)`` does).
    static func walked(_ name: String, _ bytes: [UInt8]) -> NamedContent? {
        bytes.withUnsafeBytes { ItemNamedContent.value(named: name, in: $0) } ?? whole(name, bytes)
    }

    static func sampleItems() -> [Activitylog_V1_SearchableItem] {
        var items: [Activitylog_V1_SearchableItem] = []
        items.append(Activitylog_V1_SearchableItem())
        var plain = Activitylog_V1_SearchableItem()
        plain.uniqueIdentifier = "lib-1"
        plain.attributeSet.title = "Library of strategy games"
        items.append(plain)
        var full = Activitylog_V1_SearchableItem()
        full.uniqueIdentifier = "games/strategy/42"
        full.domainIdentifier = "games"
        full.expirationDateMicros = 1_800_000_000_000_000
        full.defaultExpiration = true
        var set = Activitylog_V1_ContentAttributes()
        set.title = "Über Strategie ☕︎ — «Netzwerk»"
        set.displayName = "strategy"
        set.contentDescription = String(repeating: "A network game of strategy, word after word. ", count: 40)
        set.keywords = ["game", "strategy", "game", "Game", "network"]
        set.authorNames = ["Ada", "Grace", "Ada"]
        set.comment = "no comment"
        set.contentType = "public.text"
        set.contentCreationDateMicros = -1_234_567
        set.contentModificationDateMicros = 1_700_000_000_123_456
        set.rating = 4.5
        set.latitude = -33.865143
        set.longitude = 151.2099
        set.thumbnailData = Data([0, 1, 2, 0xFF])
        full.attributeSet = set
        items.append(full)
        // Empty values are values: an empty title, a domain of "", a rating of 0.
        var empty = Activitylog_V1_SearchableItem()
        empty.uniqueIdentifier = "e"
        empty.domainIdentifier = ""
        empty.attributeSet.title = ""
        empty.attributeSet.keywords = [""]
        empty.attributeSet.rating = 0
        empty.attributeSet.contentCreationDateMicros = 0
        items.append(empty)
        // More than 16 keywords: the set-based deduplication.
        var many = Activitylog_V1_SearchableItem()
        many.uniqueIdentifier = "many"
        many.attributeSet.keywords = (0..<40).map { "k\($0 % 23)" }
        many.attributeSet.authorNames = (0..<17).map { "a\($0 % 5)" }
        items.append(many)
        return items
    }

    /// Bytes a decoder reads in ways the simple cases do not show.
    static func trickyBytes() throws -> [(String, [UInt8])] {
        let items = sampleItems()
        let full: [UInt8] = try items[2].serializedBytes()
        let plain: [UInt8] = try items[1].serializedBytes()
        var update = Activitylog_V1_SearchableItem()
        update.domainIdentifier = "other"
        update.attributeSet.title = "Second title"
        update.attributeSet.keywords = ["network", "extra"]
        update.attributeSet.rating = 1
        let second: [UInt8] = try update.serializedBytes()
        var cases: [(String, [UInt8])] = []
        // Two messages concatenated merge: singular fields take the last value,
        // repeated ones append, the attribute set (given twice) merges.
        cases.append(("merged messages", full + second))
        cases.append(("merged the other way", second + full))
        cases.append(("plain then full", plain + full))
        // A known field with another wire type is skipped as unknown:
        // attribute set as a varint, title (in the set) as a fixed32,
        // domain as a varint, rating as a varint, a date as a string.
        let wrongSet: [UInt8] = [0x18, 0x05, 0x10, 0x07]
        let innerWrong: [UInt8] = [0x0D, 1, 2, 3, 4, 0x50, 0x03, 0x42, 0x01, 0x41]
        cases.append(("wrong wire types", full + wrongSet + [0x1A, UInt8(innerWrong.count)] + innerWrong))
        // Unknown fields, at both levels, are skipped.
        let innerUnknown: [UInt8] = [0xF8, 0x01, 0x07, 0x79, 1, 2, 3, 4, 5, 6, 7, 8]
        cases.append(("unknown fields", plain + [0xA2, 0x06, 0x01, 0x41] + [0x1A, UInt8(innerUnknown.count)] + innerUnknown))
        // A group (wire type 3/4) the walk does not read: the whole decode answers.
        cases.append(("a group", plain + [0xA3, 0x06, 0x08, 0x01, 0xA4, 0x06]))
        // Not the wire format, field number 0, a title that is not UTF-8: the whole decode refuses them.
        cases.append(("truncated", Array(full.dropLast())))
        cases.append(("field number 0", plain + [0x02, 0x00]))
        cases.append(("invalid UTF-8 title", [0x1A, 0x04, 0x0A, 0x02, 0xC3, 0x28]))
        cases.append(("invalid UTF-8 keyword", [0x1A, 0x04, 0x22, 0x02, 0xFF, 0xFE]))
        return cases
    }

    @Test("for every name and every sample item, the wire walk gives what the whole decode gives")
    func sampleItemsExact() throws {
        for item in Self.sampleItems() {
            let bytes: [UInt8] = try item.serializedBytes()
            for name in Self.names {
                let walked = bytes.withUnsafeBytes { ItemNamedContent.value(named: name, in: $0) }
                #expect(walked != nil, "the walk fell back on well-formed bytes for \(name)")
                #expect(walked == Self.whole(name, bytes), "\(name) of \(item.uniqueIdentifier)")
            }
        }
        // The sample holds what the names read: not a test of absences only.
        let full: [UInt8] = try Self.sampleItems()[2].serializedBytes()
        #expect(Self.walked("keywords", full) == .field(["game", "strategy", "Game", "network"]))
        #expect(Self.walked("contentCreationDate", full) == .attribute(.date(Date(timeIntervalSince1970: -1.234567))))
        #expect(Self.walked("domainIdentifier", full) == .attribute(.string("games")))
    }

    @Test("merged, repeated, mistyped and unknown fields read as a decoder reads them; bytes it refuses fall back to it")
    func trickyBytesExact() throws {
        for (label, bytes) in try Self.trickyBytes() {
            for name in Self.names {
                #expect(Self.walked(name, bytes) == Self.whole(name, bytes), "\(name) of \(label)")
            }
        }
        let cases = Dictionary(uniqueKeysWithValues: try Self.trickyBytes())
        let merged = try #require(cases["merged messages"])
        #expect(Self.walked("title", merged) == .field(["Second title"]))
        #expect(Self.walked("keywords", merged) == .field(["game", "strategy", "Game", "network", "extra"]))
        #expect(Self.walked("domainIdentifier", merged) == .attribute(.string("other")))
        #expect(Self.walked("rating", merged) == .attribute(.number(1)))
        #expect(Self.walked("displayName", merged) == .field(["strategy"]))
        for label in ["truncated", "field number 0", "invalid UTF-8 title", "a group"] {
            let bytes = try #require(cases[label])
            #expect(bytes.withUnsafeBytes { ItemNamedContent.value(named: "title", in: $0) } == nil, "\(label) is not walked")
        }
        #expect(Self.whole("title", try #require(cases["truncated"])) == nil)
    }

    @Test("the indexer's walk of an item's bytes gives the item the whole decode gives, or falls back to it")
    func itemWireExact() throws {
        for item in Self.sampleItems() {
            let bytes: [UInt8] = try item.serializedBytes()
            let walked = bytes.withUnsafeBytes { ItemWire.item($0) }
            #expect(walked != nil, "the walk fell back on \(item.uniqueIdentifier)'s well-formed bytes")
            #expect(walked == item)
        }
        for (label, bytes) in try Self.trickyBytes() {
            let whole = try? Activitylog_V1_SearchableItem(serializedBytes: bytes)
            guard let walked = bytes.withUnsafeBytes({ ItemWire.item($0) }) else { continue }   // falls back: the whole decode answers
            #expect(walked == whole, "\(label)")
        }
        // Merged messages (an attribute set given twice) are walked, not left to the decoder.
        let cases = Dictionary(uniqueKeysWithValues: try Self.trickyBytes())
        let merged = try #require(cases["merged messages"])
        #expect(merged.withUnsafeBytes { ItemWire.item($0) } == (try Activitylog_V1_SearchableItem(serializedBytes: merged)))
        for label in ["truncated", "field number 0", "invalid UTF-8 title", "a group", "unknown fields", "wrong wire types"] {
            #expect(try #require(cases[label]).withUnsafeBytes { ItemWire.item($0) } == nil, "\(label) is not walked")
        }
    }

    @Test("the item store's walk without attributes takes exactly the bytes the whole walk takes, and gives its item without the attribute set")
    func itemWireKeysExact() throws {
        let samples = try Self.sampleItems().map { try $0.serializedBytes() as [UInt8] }
        for bytes in samples + (try Self.trickyBytes().map(\.1)) {
            let whole = bytes.withUnsafeBytes { ItemWire.item($0) }
            var expected = whole
            expected?.clearAttributeSet()
            #expect(bytes.withUnsafeBytes { ItemWire.keys($0) } == expected)
        }
    }

    @Test("in a store, each item document's named content is its whole content's, and queries find the same items with and without it")
    func storeExact() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore(path: path, options: testOptions())
        var lib1 = makeItem("lib-1", domain: "games", title: "Library", keywords: ["game", "library", "game"])
        lib1.attributeSet.displayName = "strategy"
        lib1.attributeSet.contentDescription = "a network of libraries"
        lib1.attributeSet.rating = 3
        lib1.attributeSet.contentCreationDate = at(5)
        var lib2 = makeItem("lib-2", domain: "games.board", title: "Board games", keywords: ["board"])
        lib2.attributeSet.authorNames = ["Ada", "Ada", "Grace"]
        lib2.attributeSet.comment = "strategy"
        var net1 = makeItem("net-1", title: "Network")
        net1.attributeSet.contentType = "public.text"
        try store.indexSearchableItems([lib1, lib2, net1], at: at(0))
        // Merged updates: the merged item is what its event holds.
        let update = try SearchableItem(json: JSONValue(parsing: #"""
            {"uniqueIdentifier":"lib-1","isUpdate":true,"attributeSet":{"title":"Library two","keywords":["gamer"],"latitude":1.5,"displayName":null}}
            """#))
        let replace = makeItem("net-1", domain: "games", title: "Network game", keywords: ["network"])
        try store.indexSearchableItems([update, replace], at: at(1))

        let index = store.indexViews.search.index
        var plain = index
        plain.namedContentReader = nil
        try store.readIndex { _, txn, log in
            let docs = try index.documents(in: txn, contentIn: log)
            #expect(docs.count == 3)
            let reader = try #require(index.namedContentReader)
            for doc in docs {
                let reference = try #require(doc.contentReference)
                for name in Self.names {
                    let named: NamedContent = try reference.withUnsafeBytes { bytes in try reader(bytes, name, log) }
                    #expect(named == NamedContent(name, in: (doc.fields, doc.attributes)), "\(name) of \(doc.identifier)")
                }
            }
            let merged = try #require(docs.first { $0.identifier == "lib-1" })
            #expect(merged.fields["title"] == ["Library two"] && merged.fields["displayName"] == nil)
            for query in [#"title == "lib*"cd"#, #"displayName == "strategy"cdw && domainIdentifier == "games""#,
                          #"keywords == "game*"c"#, #"contentDescription == "*network*"c"#, #"authorNames == "ada""#,
                          #"comment == "*" || contentType == "public.*""#, #"keywords != "network""#, #"title == "*""#,
                          #"domainIdentifier == "games*" && rating == "*""#, #"latitude == "*""#] {
                let fast = try index.query(query, now: at(2), in: txn, contentIn: log).map(\.identifier).sorted()
                let slow = try plain.query(query, now: at(2), in: txn, contentIn: log).map(\.identifier).sorted()
                #expect(fast == slow, "\(query)")
            }
            #expect(try index.query(#"keywords == "game*"c"#, now: at(2), in: txn, contentIn: log).map(\.identifier) == ["lib-1"])   // "gamer", merged in
        }
    }

    @Test("the UTF-8 check refuses what the standard library refuses, and nothing else")
    func utf8Check() {
        func check(_ bytes: [UInt8]) -> Bool {
            let ours = bytes.withUnsafeBytes { ItemNamedContent.isUTF8($0, 0..<$0.count) }
            let library = String(validating: bytes, as: UTF8.self) != nil
            return ours == library
        }
        var failures: [[UInt8]] = []
        // Every sequence of one or two bytes, each after ASCII text (the eight-byte steps).
        for a in 0...255 {
            for b in 0...255 where !check(Array("abcdefghi".utf8) + [UInt8(a), UInt8(b)]) {
                failures.append([UInt8(a), UInt8(b)])
            }
        }
        // Lead bytes C0...FF with two and three more bytes near the edges of their ranges.
        let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xFF]
        for a in 0xC0...0xFF {
            for b in edges {
                for c in edges {
                    for d in edges where !check([UInt8(a), b, c, d]) { failures.append([UInt8(a), b, c, d]) }
                    if !check([UInt8(a), b, c]) { failures.append([UInt8(a), b, c]) }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(check(Array("Über Strategie ☕︎ — «Netzwerk» 𝄞".utf8)))
    }

}
