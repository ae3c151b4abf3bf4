import Foundation
import Testing
import TextIndex

/// Sentences from `shared/seeds/`, each found by the words a native reader
/// would type, in free text and with `title == "…"wcd`.
@Suite("Multilingual search")
struct MultilingualTests {
    /// (seed file prefix, a word the sentence contains, what a reader types)
    static let cases: [(seed: String, contains: String, typed: String)] = [
        ("000", "状態", "状態"),               // Japanese: state
        ("000", "アプリの状態", "アプリ"),      // Japanese: app
        ("004", "索引所有应用内容", "索引"),    // Chinese: index
        ("004", "索引所有应用内容", "应用"),    // Chinese: application
        ("002", "Introducción", "introduccion"),   // Spanish, without accents
        ("002", "indexación pública", "Indexacion"),
        ("003", "गतिविधि", "गतिविधि"),          // Hindi: activity
        ("000", "Spotlight", "Spotlight"),
    ]

    /// The first line of the seed that contains `needle`.
    static func sentence(_ seed: String, containing needle: String) throws -> String {
        let text = try CorpusFixture.seed(seed)
        let line = text.split(separator: "\n").first { $0.contains(needle) }
        return try #require(line.map(String.init), "no line of seed \(seed) contains \(needle)")
    }

    @Test(arguments: 0..<cases.count)
    func foundByWhatAReaderTypes(_ i: Int) throws {
        let c = MultilingualTests.cases[i]
        let text = try MultilingualTests.sentence(c.seed, containing: c.contains)
        let t = try TemporaryIndex()
        try t.write { w in
            try w.upsert(.item("doc", title: text))
            try w.upsert(.item("other", title: "Something else entirely"))
        }
        #expect(t.ids(try t.search(c.typed)) == ["doc"], "search \(c.typed) in \(text)")
        #expect(t.ids(try t.query("title == \"\(c.typed)\"wcd")) == ["doc"], "query \(c.typed) in \(text)")
        // As a prefix too (search as you type), when the word is longer than one character.
        if c.typed.count > 2 {
            #expect(t.ids(try t.search(String(c.typed.dropLast()))) == ["doc"])
        }
    }

    @Test func japaneseSentenceIsSegmentedIntoWords() throws {
        let text = try MultilingualTests.sentence("000", containing: "アプリの状態")
        var tokenizer = Tokenizer()
        let words = tokenizer.words(text)
        #expect(words.contains("アプリ"))
        #expect(words.contains("状態"))
    }

    @Test func chineseSentenceIsSegmentedIntoWords() throws {
        let text = try MultilingualTests.sentence("004", containing: "索引所有应用内容")
        var tokenizer = Tokenizer()
        let words = tokenizer.words(text)
        #expect(words.contains("索引"))
        #expect(words.contains("应用"))
    }
}
