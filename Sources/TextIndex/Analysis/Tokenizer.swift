import CICU
import Foundation

/// Splits text into words (Unicode word segmentation) and folds words into
/// index terms.
///
/// ```swift
/// var tokenizer = Tokenizer()
/// tokenizer.words("NSUserActivityオブジェクトは、アプリの状態")
/// // ["NSUserActivity", "オブジェクト", "は", "アプリ", "の", "状態"]
/// tokenizer.terms("Introducción a la indexación")
/// // ["introduccion", "a", "la", "indexacion"]
/// Tokenizer.camelParts("MyWindowClass")   // ["My", "Window", "Class"]
/// ```
///
/// - Non-ASCII text goes through ICU's word break iterator (`ubrk_open(UBRK_WORD)`
///   in `CICU`), which segments Chinese and Japanese with its dictionaries and
///   keeps Hindi words whole. Segments that are spaces or punctuation (rule
///   status `UBRK_WORD_NONE`) are not words.
/// - Pure-ASCII text takes a fast path without ICU that applies the same
///   rules (UAX #29 restricted to ASCII, as ICU 72 implements them): letters
///   (`@` counts as one), digits and `_` join; `.` and `'` join letters (`e.g`, `can't`) and
///   digits (`3.14`); `,` and `;` join digits (`1,000`); `:` does not join
///   (`game::strategy` is `game`, `strategy`). A test compares both paths.
/// - So does text whose other characters are Latin letters that fold to ASCII
///   (``LatinFolding``: `é`, `ß`, `Ñ`): they are letters to the same rules,
///   and they fold by a table. A test compares it with ICU on the whole corpus.
/// - A term is a word folded with ``TextFolding/Options/index`` and cut to
///   ``maximumTermLength`` bytes at a character boundary (so that every
///   LMDB key stays under 511 bytes); a word that folds to nothing is dropped.
///
/// Holds reusable scratch buffers: keep one per thread and reuse it.
public struct Tokenizer {
    /// The longest term in bytes; longer words are cut (deterministically,
    /// at the last UTF-8 character boundary that fits).
    public static let maximumTermLength = 255

    /// Bumped whenever this code's rules (ASCII path, compound parts,
    /// folding, cutting) change what terms a text gives.
    static let rulesVersion = 1

    /// The ICU version in use, e.g. `72.1` (`u_getVersion`, through `cicu_version`).
    public static let icuVersion: String = {
        var buffer = [CChar](repeating: 0, count: 32)
        cicu_version(&buffer, Int32(buffer.count))
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// What decides the terms of a text: ICU's major and minor version (its
    /// word break rules and dictionaries, its normalization data) and this
    /// code's rules, e.g. `ICU 72.1, rules 1`. The same identity, the same
    /// terms. A patch release (72.1.1) keeps the identity: it must agree with
    /// ``identityNumber``, which rebuilds the index when it changes, or a
    /// store would refuse every index write after the update with nothing
    /// to rebuild it.
    public static let identity = "ICU \(icuMajorMinor.major).\(icuMajorMinor.minor), rules \(rulesVersion)"

    /// ``identity`` as a number for a projection's version: ICU's major and
    /// minor version and the rules, e.g. 7201 + 100_000 × rules.
    public static let identityNumber: UInt32 =
        UInt32(rulesVersion) * 100_000 + min(icuMajorMinor.major, 999) * 100 + min(icuMajorMinor.minor, 99)

    /// ICU's major and minor version, from ``icuVersion``.
    static let icuMajorMinor: (major: UInt32, minor: UInt32) = {
        let parts = icuVersion.split(separator: ".").map { UInt32($0) ?? 0 }
        return (parts.first ?? 0, parts.count > 1 ? parts[1] : 0)
    }()

    var bounds: [Int32] = []
    var folded: [UInt8] = []
    var joined: [UInt8] = []
    var batchFolded: [UInt8] = []
    var batchRanges: [Range<Int>] = []
    var batchSlots: [Int32] = []
    /// The ASCII path's scratch: the text lowercased, a word's parts, the parts already given.
    var lowered: [UInt8] = []
    var asciiParts: [Range<Int>] = []
    var asciiEmitted: [Range<Int>] = []
    /// The other path's scratch: a word's parts (two arrays a non-ASCII word were a fifth of its tokenizing's allocations).
    var wordParts: [Range<Int>] = []
    /// The Latin path's scratch: the text with its non-ASCII bytes as `a`.
    var latinCopy: [UInt8] = []
    /// ``PreparedDocument``'s per-document scratch, kept between documents
    /// so that preparing one allocates only its result (nil while in use).
    var preparation: PreparationScratch? = PreparationScratch()

    public init() {}

    // MARK: Words

    /// The byte ranges of the words of UTF-8 `bytes`, in order, into
    /// `ranges` (replacing its contents; reuse one array across calls).
    public mutating func wordRanges(in bytes: UnsafeBufferPointer<UInt8>, into ranges: inout [Range<Int>]) {
        ranges.removeAll(keepingCapacity: true)
        if TextFolding.isASCII(bytes) {
            Tokenizer.forEachASCIIWord(in: bytes) { ranges.append($0) }
            return
        }
        if LatinFolding.covers(bytes) {
            forEachLatinWord(in: bytes) { ranges.append($0) }
            return
        }
        // Mixed text (Spanish, or English with a few accents): a word never
        // spans ASCII whitespace, so the text is cut there into pieces, and
        // only the pieces with non-ASCII characters go to ICU. A cut is made
        // only before an ASCII byte or a letter, never before a combining
        // mark, which ICU would attach to the space.
        var start = 0
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if (b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D) && i + 1 < n && Tokenizer.startsCleanly(bytes, at: i + 1) {
                if i + 1 - start > 0 { piece(bytes, start..<(i + 1), into: &ranges) }
                start = i + 1
            }
            i += 1
        }
        if n > start { piece(bytes, start..<n, into: &ranges) }
    }

    /// Whether the character at `i` is ASCII or a letter (no mark or joiner).
    static func startsCleanly(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        let b = bytes[i]
        if b < 0x80 { return true }
        var iterator = UnsafeBufferPointer(rebasing: bytes[i...]).makeIterator()
        var decoder = UTF8()
        guard case .scalarValue(let s) = decoder.decode(&iterator) else { return false }
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .otherLetter, .modifierLetter: return true
        default: return false
        }
    }

    /// The words of one piece of `bytes` (ASCII fast path or ICU), offset into the whole.
    mutating func piece(_ bytes: UnsafeBufferPointer<UInt8>, _ r: Range<Int>, into ranges: inout [Range<Int>]) {
        let sub = UnsafeBufferPointer(rebasing: bytes[r])
        let base = r.lowerBound
        if TextFolding.isASCII(sub) {
            Tokenizer.forEachASCIIWord(in: sub) { ranges.append(($0.lowerBound + base)..<($0.upperBound + base)) }
            return
        }
        if LatinFolding.covers(sub) {
            forEachLatinWord(in: sub) { ranges.append(($0.lowerBound + base)..<($0.upperBound + base)) }
            return
        }
        let n = icuWords(sub)
        for i in 0..<n {
            ranges.append((Int(bounds[2 * i]) + base)..<(Int(bounds[2 * i + 1]) + base))
        }
    }

    /// The words of text that ``LatinFolding/covers(_:)``: its Latin letters
    /// (two UTF-8 bytes each) are letters for UAX #29 (`ALetter`) as ASCII
    /// letters are, so the ASCII scan of a copy in which each of their bytes
    /// is `a` gives ICU's words, at the same byte offsets.
    mutating func forEachLatinWord(in bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Void) {
        var copy = latinCopy
        latinCopy = []
        defer { latinCopy = copy }
        copy.removeAll(keepingCapacity: true)
        copy.append(contentsOf: bytes)
        copy.withUnsafeMutableBufferPointer { out in
            for i in out.indices where out[i] >= 0x80 { out[i] = UInt8(ascii: "a") }
            Tokenizer.forEachASCIIWord(in: UnsafeBufferPointer(out), body)
        }
    }

    /// As ``wordRanges(in:into:)``, always through ICU, even for ASCII text:
    /// what the ASCII fast path is checked against.
    public mutating func icuWordRanges(in bytes: UnsafeBufferPointer<UInt8>, into ranges: inout [Range<Int>]) {
        ranges.removeAll(keepingCapacity: true)
        let n = icuWords(bytes)
        for i in 0..<n {
            ranges.append(Int(bounds[2 * i])..<Int(bounds[2 * i + 1]))
        }
    }

    /// Runs ICU over `bytes`, leaving word bounds in `bounds`; returns the word count.
    mutating func icuWords(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        // Never more words than bytes; start smaller and grow on demand.
        var capacity = max(16, bytes.count / 3)
        while true {
            if bounds.count < 2 * capacity { bounds = [Int32](repeating: 0, count: 2 * capacity) }
            let n = bounds.withUnsafeMutableBufferPointer {
                cicu_words(bytes.baseAddress, Int32(bytes.count), $0.baseAddress, Int32(capacity))
            }
            if n < 0 { return 0 }
            if Int(n) <= capacity { return Int(n) }
            capacity = Int(n)
        }
    }

    /// The words of `text`, unfolded.
    public mutating func words(_ text: String) -> [String] {
        var copy = text
        var ranges: [Range<Int>] = []
        return copy.withUTF8 { bytes in
            wordRanges(in: bytes, into: &ranges)
            return ranges.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
        }
    }

    /// The terms of `text`: its words folded for the index, in order.
    public mutating func terms(_ text: String) -> [String] {
        var copy = text
        var ranges: [Range<Int>] = []
        var result: [String] = []
        copy.withUTF8 { bytes in
            wordRanges(in: bytes, into: &ranges)
            for r in ranges {
                let term = fold(UnsafeBufferPointer(rebasing: bytes[r]))
                if !term.isEmpty { result.append(String(decoding: term, as: UTF8.self)) }
            }
        }
        return result
    }

    /// Calls `body` with each term the index takes from one field value:
    /// each word folded (`isWord` true: it counts toward the field's length),
    /// then the parts of compound words (see ``indexTerms(_:keepWhole:)``),
    /// then, with `keepWhole`, the whole value when it is more than one word.
    /// The buffer passed to `body` is valid only during the call. Returns the
    /// number of words.
    mutating func forEachIndexTerm(in bytes: UnsafeBufferPointer<UInt8>, keepWhole: Bool, ranges: inout [Range<Int>],
                                   _ body: (_ term: UnsafeBufferPointer<UInt8>, _ isWord: Bool) -> Void) -> Int {
        if TextFolding.isASCII(bytes) { return forEachASCIIIndexTerm(in: bytes, keepWhole: keepWhole, body) }
        wordRanges(in: bytes, into: &ranges)
        // Non-ASCII text: fold all its words in one ICU call, NUL-separated
        // (no normalization or folding creates or merges across U+0000).
        let batched = !TextFolding.isASCII(bytes) && ranges.count > 1 && foldWords(bytes, ranges)
        var words = 0
        var parts = wordParts
        wordParts = []
        defer { wordParts = parts }
        for (k, r) in ranges.enumerated() {
            let word = UnsafeBufferPointer(rebasing: bytes[r])
            if batched && batchSlots[k] >= 0 {
                let f = batchRanges[Int(batchSlots[k])]
                if f.isEmpty { continue }
                batchFolded.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[f]), true) }
            } else {
                foldInPlace(word)
                if folded.isEmpty { continue }
                folded.withUnsafeBufferPointer { body($0, true) }
            }
            words += 1
            if Tokenizer.isSimpleASCII(word) { continue }
            // Parts of compounds, once each (besides the word itself): the
            // case changes' when more than one, then the runs' when more than one.
            parts.removeAll(keepingCapacity: true)
            Tokenizer.camelParts(word, into: &parts)
            if parts.count == 1 { parts.removeAll(keepingCapacity: true) }
            let before = parts.count
            Tokenizer.alphanumericRuns(word, into: &parts)
            if parts.count - before == 1 { parts.removeLast() }
            if parts.isEmpty { continue }
            foldInPlace(word)
            var seen = Set<[UInt8]>([folded])
            for p in parts {
                foldInPlace(UnsafeBufferPointer(rebasing: word[p]))
                if !folded.isEmpty && seen.insert(folded).inserted {
                    folded.withUnsafeBufferPointer { body($0, false) }
                }
            }
        }
        if keepWhole && (ranges.count > 1 || (ranges.count == 1 && ranges[0] != 0..<bytes.count)) {
            foldInPlace(bytes)
            if !folded.isEmpty { folded.withUnsafeBufferPointer { body($0, false) } }
        }
        return words
    }

    /// ``forEachIndexTerm(in:keepWhole:ranges:_:)`` for pure-ASCII text (86 %
    /// of the corpus), with the same terms in the same order: the text is
    /// lowercased once (what folding does to ASCII, a test checks it against
    /// ICU), and every term, a word's, a part's or the whole value's, is a
    /// slice of that copy, cut to ``maximumTermLength`` bytes (every ASCII
    /// byte is a character boundary). No per-word copy, no ICU call.
    mutating func forEachASCIIIndexTerm(in bytes: UnsafeBufferPointer<UInt8>, keepWhole: Bool,
                                        _ body: (_ term: UnsafeBufferPointer<UInt8>, _ isWord: Bool) -> Void) -> Int {
        let n = bytes.count
        var buffer = lowered
        lowered = []
        var parts = asciiParts
        asciiParts = []
        var emitted = asciiEmitted
        asciiEmitted = []
        defer {
            lowered = buffer
            asciiParts = parts
            asciiEmitted = emitted
        }
        if buffer.count < n { buffer = [UInt8](repeating: 0, count: max(n, 2 * buffer.count)) }
        let limit = Tokenizer.maximumTermLength
        var words = 0
        var first = 0..<0
        buffer.withUnsafeMutableBufferPointer { out in
            for i in 0..<n {
                let b = bytes[i]
                out[i] = b &- 0x41 < 26 ? b | 0x20 : b
            }
            let low = UnsafeBufferPointer(out)
            @inline(__always) func term(_ r: Range<Int>) -> UnsafeBufferPointer<UInt8> {
                UnsafeBufferPointer(rebasing: low[r.lowerBound..<min(r.upperBound, r.lowerBound + limit)])
            }
            Tokenizer.forEachASCIIWord(in: bytes) { r in
                if words == 0 { first = r }
                words += 1
                body(term(r), true)
                let word = UnsafeBufferPointer(rebasing: bytes[r])
                if Tokenizer.isSimpleASCII(word) { return }
                // Parts of compounds, once each (besides the word itself).
                Tokenizer.asciiParts(word, into: &parts)
                if parts.isEmpty { return }
                let whole = term(r)
                if parts.count > 32 {
                    // Many parts (a long mixed string): a set, not a scan.
                    var seen = Set<[UInt8]>([Array(whole)])
                    for p in parts {
                        let t = term((r.lowerBound + p.lowerBound)..<(r.lowerBound + p.upperBound))
                        if seen.insert(Array(t)).inserted { body(t, false) }
                    }
                    return
                }
                emitted.removeAll(keepingCapacity: true)
                for p in parts {
                    let t = term((r.lowerBound + p.lowerBound)..<(r.lowerBound + p.upperBound))
                    if Tokenizer.sameBytes(t, whole) { continue }
                    if emitted.contains(where: { Tokenizer.sameBytes(term($0), t) }) { continue }
                    emitted.append((r.lowerBound + p.lowerBound)..<(r.lowerBound + p.upperBound))
                    body(t, false)
                }
            }
            if keepWhole && n > 0 && (words > 1 || (words == 1 && first != 0..<n)) {
                body(term(0..<n), false)
            }
        }
        return words
    }

    @inline(__always)
    static func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// The parts of an ASCII compound `word`, as ``camelParts(_:)`` and
    /// ``alphanumericRuns(_:)`` give them for ASCII and in the order
    /// ``forEachIndexTerm(in:keepWhole:ranges:_:)`` takes them: the parts at
    /// lowercase-to-uppercase changes (when more than one), then the runs of
    /// letters and of digits (when more than one), into `parts`.
    static func asciiParts(_ word: UnsafeBufferPointer<UInt8>, into parts: inout [Range<Int>]) {
        parts.removeAll(keepingCapacity: true)
        let n = word.count
        var start = 0
        for i in 1..<max(n, 1) where word[i - 1] &- 0x61 < 26 && word[i] &- 0x41 < 26 {
            parts.append(start..<i)
            start = i
        }
        if !parts.isEmpty { parts.append(start..<n) }
        let camel = parts.count
        var runStart = -1
        var kind = 0  // 0 none, 1 letters, 2 digits
        for i in 0...n {
            var k = 0
            if i < n {
                let b = word[i]
                k = b &- 0x30 < 10 ? 2 : ((b | 0x20) &- 0x61 < 26 ? 1 : 0)
            }
            if k != kind {
                if runStart >= 0 { parts.append(runStart..<i) }
                runStart = k != 0 ? i : -1
                kind = k
            }
        }
        if parts.count - camel == 1 { parts.removeLast() }
    }

    /// Folds the non-ASCII words among `ranges` of `bytes` at once into
    /// `batchFolded` (`batchSlots[k]`: the index in `batchRanges` of word
    /// `k`'s folded range, −1 for an ASCII word, folded on its own); false
    /// when it cannot.
    mutating func foldWords(_ bytes: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>]) -> Bool {
        joined.removeAll(keepingCapacity: true)
        batchSlots.removeAll(keepingCapacity: true)
        var slots: Int32 = 0
        for r in ranges {
            let word = UnsafeBufferPointer(rebasing: bytes[r])
            if TextFolding.isASCII(word) { batchSlots.append(-1); continue }
            if word.contains(0) { return false }
            if slots > 0 { joined.append(0) }
            joined.append(contentsOf: word)
            batchSlots.append(slots)
            slots += 1
        }
        joined.withUnsafeBufferPointer { TextFolding.fold($0, .index, into: &batchFolded) }
        batchRanges.removeAll(keepingCapacity: true)
        var start = 0
        for i in 0...batchFolded.count where i == batchFolded.count || batchFolded[i] == 0 {
            var end = i
            if end - start > Tokenizer.maximumTermLength {
                end = start + Tokenizer.truncatedLength(Array(batchFolded[start..<end]), Tokenizer.maximumTermLength)
            }
            batchRanges.append(start..<end)
            start = i + 1
        }
        return batchRanges.count == Int(slots) || slots == 0
    }

    /// Folds `word` for the index into `folded`, cut to ``maximumTermLength``.
    mutating func foldInPlace(_ word: UnsafeBufferPointer<UInt8>) {
        TextFolding.fold(word, .index, into: &folded)
        if folded.count > Tokenizer.maximumTermLength {
            folded.removeLast(folded.count - Tokenizer.truncatedLength(folded, Tokenizer.maximumTermLength))
        }
    }

    /// The terms the index takes from `text`, in order, repeats kept: its
    /// words folded; for a compound word also its parts at lowercase-to-
    /// uppercase changes (`MyWindowClass`: `my`, `window`, `class`) and its
    /// runs of letters and of digits (`kdiff3`: `kdiff`, `3`;
    /// `wiki.virtualsquare.org`: `wiki`, `virtualsquare`, `org`); with
    /// `keepWhole` (keywords), the whole text folded when it is more than
    /// one word (`game::strategy`).
    ///
    /// ```swift
    /// tokenizer.indexTerms("MyWindowClass 2")   // ["mywindowclass", "my", "window", "class", "2"]
    /// ```
    public mutating func indexTerms(_ text: String, keepWhole: Bool = false) -> [String] {
        var copy = text
        var ranges: [Range<Int>] = []
        var result: [String] = []
        _ = copy.withUTF8 { bytes in
            forEachIndexTerm(in: bytes, keepWhole: keepWhole, ranges: &ranges) { term, _ in
                result.append(String(decoding: term, as: UTF8.self))
            }
        }
        return result
    }

    /// As ``indexTerms(_:keepWhole:)``, without any fast path: ICU splits
    /// the whole text and folds every word, part and value, even ASCII ones,
    /// and parts are told apart with a set. What the fast paths (ASCII text,
    /// whitespace pieces, batched folding) are checked against.
    public mutating func icuIndexTerms(_ text: String, keepWhole: Bool = false) -> [String] {
        var copy = text
        var ranges: [Range<Int>] = []
        var result: [String] = []
        copy.withUTF8 { bytes in
            icuWordRanges(in: bytes, into: &ranges)
            func folded(_ b: UnsafeBufferPointer<UInt8>) -> [UInt8] {
                var out: [UInt8] = []
                TextFolding.foldWithICU(b, .index, into: &out)
                if out.count > Tokenizer.maximumTermLength {
                    out.removeLast(out.count - Tokenizer.truncatedLength(out, Tokenizer.maximumTermLength))
                }
                return out
            }
            for r in ranges {
                let word = UnsafeBufferPointer(rebasing: bytes[r])
                let whole = folded(word)
                if whole.isEmpty { continue }
                result.append(String(decoding: whole, as: UTF8.self))
                var parts = Tokenizer.camelParts(word)
                if parts.count == 1 { parts.removeAll() }
                let runs = Tokenizer.alphanumericRuns(word)
                if runs.count > 1 { parts.append(contentsOf: runs) }
                var seen: Set<[UInt8]> = [whole]
                for p in parts {
                    let f = folded(UnsafeBufferPointer(rebasing: word[p]))
                    if !f.isEmpty && seen.insert(f).inserted { result.append(String(decoding: f, as: UTF8.self)) }
                }
            }
            if keepWhole && (ranges.count > 1 || (ranges.count == 1 && ranges[0] != 0..<bytes.count)) {
                let f = folded(bytes)
                if !f.isEmpty { result.append(String(decoding: f, as: UTF8.self)) }
            }
        }
        return result
    }

    /// `word` folded for the index and cut to ``maximumTermLength``; the
    /// buffer is reused by the next call.
    mutating func fold(_ word: UnsafeBufferPointer<UInt8>, _ options: TextFolding.Options = .index) -> [UInt8] {
        TextFolding.fold(word, options, into: &folded)
        if folded.count > Tokenizer.maximumTermLength {
            folded.removeLast(folded.count - Tokenizer.truncatedLength(folded, Tokenizer.maximumTermLength))
        }
        return folded
    }

    /// The longest prefix of UTF-8 `bytes` of at most `limit` bytes that ends
    /// at a character boundary.
    static func truncatedLength(_ bytes: [UInt8], _ limit: Int) -> Int {
        guard bytes.count > limit else { return bytes.count }
        var end = limit
        // Step back over continuation bytes (10xxxxxx) to a scalar start.
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return end
    }

    // MARK: ASCII fast path

    /// Word-break classes of ASCII bytes under UAX #29 as ICU applies them
    /// (the scan relies on the order: letter, digit, underscore are 1…3).
    enum ASCIIClass: UInt8 {
        case other, letter, digit, underscore, midNumLet, midNum
    }

    static let asciiClasses: [ASCIIClass] = (0..<128).map { (b: Int) -> ASCIIClass in
        switch UInt8(b) {
        // ICU 72 counts `@` as a letter (so that `foo@bar.com` stays whole).
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "@"): return .letter
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return .digit
        case UInt8(ascii: "_"): return .underscore
        case UInt8(ascii: "."), UInt8(ascii: "'"): return .midNumLet
        case UInt8(ascii: ","), UInt8(ascii: ";"): return .midNum
        default: return .other
        }
    }

    static func forEachASCIIWord(in bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) throws -> Void) rethrows {
        let n = bytes.count
        try asciiClasses.withUnsafeBufferPointer { classes in
            var i = 0
            while i < n {
                let c0 = classes[Int(bytes[i])]
                guard c0 == .letter || c0 == .digit || c0 == .underscore else { i += 1; continue }
                var pos = i
                var hasAlphanumeric = c0 != .underscore
                var c = c0  // the class at `pos`
                while pos + 1 < n {
                    let d = classes[Int(bytes[pos + 1])]
                    if d.rawValue &- 1 < 3 {
                        // WB5, WB8-10, WB13a/b: letters, digits and `_` join.
                        pos += 1
                        c = d
                        if d != .underscore { hasAlphanumeric = true }
                        continue
                    }
                    if d.rawValue >= ASCIIClass.midNumLet.rawValue && pos + 2 < n {
                        let e = classes[Int(bytes[pos + 2])]
                        // WB6/7: letter (. or ') letter; WB11/12: digit (. ' , ;) digit.
                        if (c == .letter && e == .letter && d == .midNumLet) || (c == .digit && e == .digit) {
                            pos += 2
                            c = e
                            continue
                        }
                    }
                    break
                }
                // A lone `_` is not a word for ICU 72; `__` and longer runs are.
                if hasAlphanumeric || pos > i { try body(i..<(pos + 1)) }
                i = pos + 1
            }
        }
    }

    // MARK: Case changes

    /// The parts of `word` split where a lowercase letter is followed by an
    /// uppercase one (`MyWindowClass` → `My`, `Window`, `Class`;
    /// `NSUserActivity` → `NSUser`, `Activity`), as byte ranges; one range
    /// when there is no such change.
    static func camelParts(_ word: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var parts: [Range<Int>] = []
        camelParts(word, into: &parts)
        return parts
    }

    /// ``camelParts(_:)-(UnsafeBufferPointer<UInt8>)``, appended to `parts`.
    static func camelParts(_ word: UnsafeBufferPointer<UInt8>, into parts: inout [Range<Int>]) {
        var start = 0
        if TextFolding.isASCII(word) {
            var i = 1
            while i < word.count {
                let a = word[i - 1], b = word[i]
                if a &- 0x61 < 26 && b &- 0x41 < 26 {
                    parts.append(start..<i)
                    start = i
                }
                i += 1
            }
        } else if word.allSatisfy({ $0 >= 0xE3 && $0 <= 0xE9 || $0 & 0xC0 == 0x80 }) {
            // Only three-byte characters U+3000…U+9FFF (kana, CJK): no case.
        } else {
            var previousIsLower = false
            var offset = 0
            var iterator = word.makeIterator()
            var decoder = UTF8()
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let s):
                    let isUpper = s.properties.isUppercase
                    if previousIsLower && isUpper && offset > start {
                        parts.append(start..<offset)
                        start = offset
                    }
                    previousIsLower = s.properties.isLowercase
                    offset += UTF8.width(s)
                case .error:
                    previousIsLower = false
                    offset += 1
                case .emptyInput:
                    break loop
                }
            }
        }
        parts.append(start..<word.count)
    }

    /// Whether an ASCII word is one run of lowercase letters or of digits
    /// (then it has no parts): the common case, checked without allocating.
    @inline(__always)
    static func isSimpleASCII(_ word: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = word.first else { return true }
        if first &- 0x30 < 10 { return word.allSatisfy { $0 &- 0x30 < 10 } }
        // Lowercase letters, optionally after one capital (`Window`).
        let rest = first &- 0x41 < 26 ? word.dropFirst() : word[...]
        return rest.allSatisfy { $0 &- 0x61 < 26 }
    }

    /// The runs of letters and of digits in `word` (`kdiff3` → `kdiff`, `3`;
    /// `wiki.virtualsquare.org` → `wiki`, `virtualsquare`, `org`), as byte
    /// ranges: indexed besides the whole word so that a reader's word finds
    /// it inside such compounds. Combining marks stay with their letters.
    static func alphanumericRuns(_ word: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        alphanumericRuns(word, into: &runs)
        return runs
    }

    /// ``alphanumericRuns(_:)``, appended to `runs`.
    static func alphanumericRuns(_ word: UnsafeBufferPointer<UInt8>, into runs: inout [Range<Int>]) {
        var start = -1
        var kind = 0  // 0 none, 1 letters, 2 digits
        var offset = 0
        var iterator = word.makeIterator()
        var decoder = UTF8()
        func close(_ at: Int) {
            if start >= 0 { runs.append(start..<at) }
            start = -1
            kind = 0
        }
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let s):
                let p = s.properties
                let k: Int
                if s.isASCII {
                    let b = UInt8(s.value)
                    k = b &- 0x30 < 10 ? 2 : ((b | 0x20) &- 0x61 < 26 ? 1 : 0)
                } else if s.value >= 0x3040 && s.value <= 0x9FFF {
                    // Kana and CJK ideographs: letters (also the Han numerals,
                    // which must not split `三菱`), without a property lookup.
                    k = 1
                } else if p.numericType == .decimal {
                    k = 2
                } else if p.isAlphabetic || p.generalCategory == .nonspacingMark || p.generalCategory == .spacingMark {
                    k = 1
                } else {
                    k = 0
                }
                if k != kind {
                    close(offset)
                    if k != 0 { start = offset; kind = k }
                }
                offset += UTF8.width(s)
            case .error:
                close(offset)
                offset += 1
            case .emptyInput:
                break loop
            }
        }
        close(offset)
    }

    /// The parts of `word` split at lowercase-to-uppercase changes.
    public static func camelParts(_ word: String) -> [String] {
        var copy = word
        return copy.withUTF8 { bytes in
            camelParts(bytes).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
        }
    }
}
