import Foundation
import Testing
@testable import TextIndex

@Suite("Tokenizer and folding")
struct TokenizerTests {
    @Test func japaneseIsSegmentedWithTheDictionary() {
        var t = Tokenizer()
        #expect(t.words("NSUserActivityオブジェクトは、あなたのアプリの状態")
            == ["NSUserActivity", "オブジェクト", "は", "あなた", "の", "アプリ", "の", "状態"])
    }

    @Test func chineseIsSegmentedWithTheDictionary() {
        var t = Tokenizer()
        #expect(t.words("核心区别 Core Spotlight") == ["核心", "区别", "Core", "Spotlight"])
    }

    @Test func hindiWordsStayWhole() {
        var t = Tokenizer()
        #expect(t.words("गतिविधि के प्रकार") == ["गतिविधि", "के", "प्रकार"])
    }

    @Test func asciiRulesFollowUAX29() {
        var t = Tokenizer()
        #expect(t.words("game::strategy e.g. can't 3.14 1,000 foo_bar _ a.1 v1.2.3 foo--bar")
            == ["game", "strategy", "e.g", "can't", "3.14", "1,000", "foo_bar", "a", "1", "v1.2.3", "foo", "bar"])
    }

    @Test func foldingCaseDiacriticsAndCompatibility() {
        #expect(TextFolding.fold("Introducción", .index) == "introduccion")
        #expect(TextFolding.fold("Indexación", .index) == "indexacion")
        #expect(TextFolding.fold("GRÜßEN", .case) == "grüssen")
        #expect(TextFolding.fold("ﬁle Ⅻ", .case) == "file xii")
        #expect(TextFolding.fold("Crème", .diacritics) == "Creme")
        #expect(TextFolding.fold("e\u{301}") == "\u{e9}")
        #expect(TextFolding.fold("HeLLo", .case) == "hello")
    }

    @Test func termsAreFoldedWords() {
        var t = Tokenizer()
        #expect(t.terms("Introducción a la INDEXACIÓN") == ["introduccion", "a", "la", "indexacion"])
    }

    @Test func longWordsAreCutAtACharacterBoundary() {
        var t = Tokenizer()
        let long = String(repeating: "é", count: 200)  // 400 bytes
        let term = t.terms(long)[0]
        #expect(term.utf8.count <= Tokenizer.maximumTermLength)
        #expect(term == String(repeating: "e", count: 200))
        let longer = String(repeating: "ж", count: 200)  // 400 bytes, 2 each, folds to itself
        let cut = t.terms(longer)[0]
        #expect(cut.utf8.count == 254)
    }

    @Test func camelCaseParts() {
        #expect(Tokenizer.camelParts("MyWindowClass") == ["My", "Window", "Class"])
        #expect(Tokenizer.camelParts("NSUserActivity") == ["NSUser", "Activity"])
        #expect(Tokenizer.camelParts("plain") == ["plain"])
        #expect(Tokenizer.camelParts("éÉtude") == ["é", "Étude"])
    }

    /// Mixed text is cut at whitespace and only its non-ASCII pieces go to
    /// ICU: the words must be those of ICU over the whole text, for every
    /// non-ASCII field of the corpus (Spanish, Japanese, Chinese).
    @Test func piecewiseSegmentationAgreesWithICU() throws {
        var t = Tokenizer()
        var pieces: [Range<Int>] = []
        var icu: [Range<Int>] = []
        var samples = [
            "Introducción a la indexación  ́combining after space, e\u{301} x\u{200D}y ok",
            "NSUserActivityオブジェクトは、あなたのアプリの状態 and Spotlight 索引 ",
            "\n\u{301}a \u{200B}b \tñ\u{0301}x",
        ]
        for item in try CorpusFixture.items() where item.language != "en" {
            samples.append(item.displayName)
            samples.append(item.contentDescription)
            if samples.count > 6000 { break }
        }
        var failures = 0
        for s in samples where !s.utf8.allSatisfy({ $0 < 0x80 }) {
            var copy = s
            copy.withUTF8 { bytes in
                t.wordRanges(in: bytes, into: &pieces)
                t.icuWordRanges(in: bytes, into: &icu)
            }
            if pieces != icu {
                failures += 1
                if failures < 3 { Issue.record("differs: \(s.debugDescription)") }
            }
        }
        #expect(failures == 0)
    }

    /// Folding a value's non-ASCII words in one ICU call gives what folding
    /// each word alone gives.
    @Test func batchFoldingAgreesWithWordByWordFolding() throws {
        var t = Tokenizer()
        var checked = 0
        for item in try CorpusFixture.items() where item.language != "en" {
            let text = item.displayName + " " + item.contentDescription
            let expected = t.words(text).map { TextFolding.fold($0, .index) }.filter { !$0.isEmpty && $0.utf8.count <= 255 }
            let terms = Set(t.indexTerms(text))
            let missing = expected.filter { !terms.contains($0) }
            #expect(missing.isEmpty, "\(missing.prefix(3)) in \(text.prefix(80))")
            if !missing.isEmpty { break }
            checked += 1
            if checked > 2000 { break }
        }
    }

    /// The ASCII fast path must split exactly as ICU does: every ASCII field
    /// of the first part of the corpus is compared.
    @Test func asciiFastPathAgreesWithICU() throws {
        var t = Tokenizer()
        var fast: [Range<Int>] = []
        var icu: [Range<Int>] = []
        var samples = [
            "0 A.D. (pronounced \"zero ey-dee\") is a free, open-source, cross-platform",
            "x's 'quoted' ..a.. 1.2.3. a1.b2 __init__ C++ c# foo@bar.com http://x.org/a_b?c=1,2;3",
            "3,5;7 a;b 1;a a'1 1'2 'a '1 _1 1_ a__ 1.__",
        ]
        samples += try CorpusFixture.asciiSamples(limit: 4000)
        for s in samples {
            var copy = s
            copy.withUTF8 { bytes in
                t.wordRanges(in: bytes, into: &fast)
                t.icuWordRanges(in: bytes, into: &icu)
            }
            #expect(fast == icu, "\(s)")
            if fast != icu { break }
        }
    }

    /// Inputs that exercise every fast path of the index's terms: ASCII
    /// rules (digits, apostrophes, hyphens, `@`, `_`, dots, commas), case
    /// changes and letter/digit runs (compound parts), long words, mixed
    /// scripts and whitespace pieces.
    static let termEdgeCases = [
        "", " ", "a", "A", "Z9", "_", "__", "a_", "@", "@x", "foo@bar.com", "x@Y.Org",
        "game::strategy", "e.g. can't 3.14 1,000 foo_bar _ a.1 v1.2.3 foo--bar",
        "rock'n'roll O'Reilly don't 'quoted' x's", "state-of-the-art well-known re-index -- - -x x-",
        "MyWindowClass NSUserActivity iPhone15Pro kdiff3 HTML5Parser ABCdef aBC a1b2c3 1a2b3c",
        "wiki.virtualsquare.org http://x.org/a_b?c=1,2;3 C++ c# .NET node.js 0xFF 1e10 3,5;7 a;b",
        "MiXeD_CaSe_With_UNDERSCORES snake_case_name __init__ TCP/IP AT&T A.B.C.",
        String(repeating: "ab", count: 200), String(repeating: "aB1", count: 120),
        String(repeating: "x", count: 300) + " " + String(repeating: "Yz", count: 140),
        "\t\n tabs\tand\nnewlines\r\n and \u{1} controls \u{7F}",
        "Introducción a la INDEXACIÓN, señor Müller's café-crème", "naïve CAFÉ 2ème",
        "NSUserActivityオブジェクトは、あなたのアプリの状態 iPhone版", "核心区别 Core Spotlight 3D打印",
        "गतिविधि के प्रकार v2", "Ελληνικά ΚΕΦΑΛΑΙΑ σς", "Straße GRÜßEN ﬁle Ⅻ", "e\u{301}te x\u{200D}y \u{200B}b",
    ]

    /// The index's terms (the ASCII path, whitespace pieces, batched
    /// folding) are those of the reference that sends everything through
    /// ICU, for the edge cases and every text field of the corpus's first
    /// 3,000 items, with and without keeping keywords whole.
    @Test func indexTermsAgreeWithICUEverywhere() throws {
        var t = Tokenizer()
        var samples = TokenizerTests.termEdgeCases
        for item in try CorpusFixture.items().prefix(3000) {
            samples += [item.title, item.displayName, item.contentDescription] + item.keywords
        }
        var failures = 0
        for s in samples {
            for keepWhole in [false, true] {
                // Bytes, not `String ==` (canonical equivalence): the index stores bytes.
                let fast = t.indexTerms(s, keepWhole: keepWhole).map { Array($0.utf8) }
                let reference = t.icuIndexTerms(s, keepWhole: keepWhole).map { Array($0.utf8) }
                if fast != reference {
                    failures += 1
                    if failures < 4 { Issue.record("\(s.debugDescription) keepWhole \(keepWhole): \(fast) != \(reference)") }
                }
            }
        }
        #expect(failures == 0)
    }

    /// ASCII folding (a byte-wise lowercase) gives ICU's bytes for every
    /// ASCII character, alone and in a string, with every option.
    @Test func asciiFoldingAgreesWithICU() {
        let all = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        for options: TextFolding.Options in [[], .case, .diacritics, .index] {
            for b in 0..<128 {
                let s = String(decoding: [UInt8(b)], as: UTF8.self)
                #expect(Array(TextFolding.fold(s, options).utf8) == Array(TextFolding.foldThroughICU(s, options).utf8), "byte \(b)")
            }
            #expect(Array(TextFolding.fold(all, options).utf8) == Array(TextFolding.foldThroughICU(all, options).utf8))
            for s in TokenizerTests.termEdgeCases {
                #expect(Array(TextFolding.fold(s, options).utf8) == Array(TextFolding.foldThroughICU(s, options).utf8),
                        "\(s.debugDescription)")
            }
        }
    }

    /// Latin letters fold without ICU (`LatinFolding`): each letter of
    /// U+00C0…U+024F alone, in a word, and after every other, as ICU folds
    /// them; the table takes the letters that fold to ASCII and no other.
    @Test func latinFoldingAgreesWithICU() {
        let letters = (LatinFolding.first...LatinFolding.last).compactMap(Unicode.Scalar.init).map { String(Character($0)) }
        for options: TextFolding.Options in [[], .case, .diacritics, .index] {
            for s in letters {
                for text in [s, "x\(s)Y", s + s.uppercased() + s.lowercased(), "\(s)\u{301}", "N\(s)é"] {
                    #expect(Array(TextFolding.fold(text, options).utf8) == Array(TextFolding.foldThroughICU(text, options).utf8),
                            "\(text.debugDescription) \(options)")
                }
            }
        }
        let all = letters.joined()
        #expect(Array(TextFolding.fold(all, .index).utf8) == Array(TextFolding.foldThroughICU(all, .index).utf8))
        #expect(TextFolding.fold("Introducción ÀÉÎÕÜ Straße Ǆemal", .index) == "introduccion aeiou strasse dzemal")
        var out: [UInt8] = []
        for s in ["æ", "ø", "×", "ÿ\u{301}", "ĸ", "ŉ"] {
            var copy = s
            #expect(copy.withUTF8 { LatinFolding.fold($0, into: &out) } == false, "\(s)")
        }
    }

    /// Latin text (ASCII and letters with diacritics) is split without ICU:
    /// the words, and every index term, must be ICU's, on every field of the
    /// whole corpus that has such text, and on the edge cases.
    @Test func latinFastPathAgreesWithICUOnTheWholeCorpus() throws {
        var t = Tokenizer()
        var fast: [Range<Int>] = []
        var icu: [Range<Int>] = []
        var samples = TokenizerTests.termEdgeCases + [
            "Ñandú's café-crème à l'œuf, ÉCOLE.Ålborg 1ér 2,5€ x.É O'Ñeill ÀbcDéf ßtraße ǅemal ǈubljana",
            "é", "É", "ÉÉ", "aé1", "é.é", "é'é", "é,1", "1é", "_é_", "é@x.org", "ÀÉ-ÎÕ", "\u{00D7}é÷",
        ]
        for item in try CorpusFixture.items() {
            for s in [item.title, item.displayName, item.contentDescription] + item.keywords
            where !s.utf8.allSatisfy({ $0 < 0x80 }) {
                samples.append(s)
            }
        }
        var latin = 0, failures = 0
        for s in samples {
            var copy = s
            let covered = copy.withUTF8 { bytes in
                t.wordRanges(in: bytes, into: &fast)
                t.icuWordRanges(in: bytes, into: &icu)
                return LatinFolding.covers(bytes)
            }
            if covered { latin += 1 }
            var same = fast == icu
            for keepWhole in [false, true] where same {
                same = t.indexTerms(s, keepWhole: keepWhole).map { Array($0.utf8) }
                    == t.icuIndexTerms(s, keepWhole: keepWhole).map { Array($0.utf8) }
            }
            if !same {
                failures += 1
                if failures < 4 { Issue.record("differs: \(s.debugDescription)") }
            }
        }
        #expect(failures == 0)
        #expect(latin > 1000, "the corpus's Latin fields take the fast path (\(latin))")
    }
}
