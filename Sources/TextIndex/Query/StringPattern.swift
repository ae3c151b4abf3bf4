/// A quoted value of the query language: literal parts between `*`
/// wildcards, and its modifiers.
///
/// - `c` case-insensitive and `d` diacritic-insensitive: both sides are
///   folded (``TextFolding``) before comparing; without them, both are in NFC.
/// - `w`: matched against each word of the field (ICU word segmentation, and
///   a lowercase-to-uppercase change starts a word too: `MyWindowClass` has
///   the words `MyWindowClass`, `My`, `Window`, `Class`).
/// - `t`: the value is split into words, each of which must match a word of
///   the field (as with `w`).
/// - neither: matched against the whole value of the field.
///
/// ```swift
/// let p = StringPattern("Window", modifiers: "w")
/// p.matches("MyWindowClass")   // true
/// StringPattern("lat*e", modifiers: "c").matches("LATTE")   // true
/// ```
public struct StringPattern: Sendable, Equatable {
    /// The text between wildcards: `a*b*` is `["a", "b", ""]`.
    public let literals: [String]
    public let caseInsensitive: Bool
    public let diacriticInsensitive: Bool
    public let wordMatch: Bool
    public let tokenMatch: Bool

    /// The literals folded as the modifiers ask, as UTF-8.
    let folded: [[UInt8]]

    /// `value` with `*` as wildcards; `modifiers` any of `c`, `d`, `w`, `t`.
    public init(_ value: String, modifiers: String = "") {
        self.init(literals: value.split(separator: "*", omittingEmptySubsequences: false).map(String.init),
                  modifiers: modifiers)
    }

    public init(literals: [String], modifiers: String) {
        self.literals = literals
        caseInsensitive = modifiers.contains("c")
        diacriticInsensitive = modifiers.contains("d")
        wordMatch = modifiers.contains("w")
        tokenMatch = modifiers.contains("t")
        let options = StringPattern.options(caseInsensitive, diacriticInsensitive)
        folded = literals.map { Array(TextFolding.fold($0, options).utf8) }
    }

    static func options(_ c: Bool, _ d: Bool) -> TextFolding.Options {
        var o: TextFolding.Options = []
        if c { o.insert(.case) }
        if d { o.insert(.diacritics) }
        return o
    }

    var foldOptions: TextFolding.Options { StringPattern.options(caseInsensitive, diacriticInsensitive) }

    /// `*`, `**`…: matches any value, so `== "*"` tests presence.
    public var isPresenceTest: Bool { literals.allSatisfy(\.isEmpty) }

    /// Whether the pattern matches one value of a field.
    public func matches(_ value: String) -> Bool {
        if tokenMatch {
            let patterns = wordPatterns()
            if patterns.isEmpty { return isPresenceTest }
            let words = StringPattern.fieldWords(value).map { Array(TextFolding.fold($0, foldOptions).utf8) }
            return patterns.allSatisfy { p in words.contains { p.globMatches($0) } }
        }
        if wordMatch {
            return StringPattern.fieldWords(value).contains { globMatches(Array(TextFolding.fold($0, foldOptions).utf8)) }
        }
        return globMatches(Array(TextFolding.fold(value, foldOptions).utf8))
    }

    /// The words `w` and `t` match against: ICU words and their parts at
    /// lowercase-to-uppercase changes.
    static func fieldWords(_ value: String) -> [String] {
        var tokenizer = Tokenizer()
        var result: [String] = []
        for word in tokenizer.words(value) {
            result.append(word)
            let parts = Tokenizer.camelParts(word)
            if parts.count > 1 { result.append(contentsOf: parts) }
        }
        return result
    }

    /// For `t`: the value split into words, each a pattern of its own (a
    /// `*` next to a word belongs to it: `lat* oat` is `lat*` and `oat`).
    func wordPatterns() -> [StringPattern] {
        // `*` becomes a space for segmentation (both one byte), then each
        // word takes the stars that touch it and the words they join.
        let joined = literals.joined(separator: "*")
        var bytes = Array(joined.utf8)
        let stars = bytes.indices.filter { bytes[$0] == UInt8(ascii: "*") }
        for i in stars { bytes[i] = UInt8(ascii: " ") }
        var tokenizer = Tokenizer()
        var ranges: [Range<Int>] = []
        bytes.withUnsafeBufferPointer { tokenizer.wordRanges(in: $0, into: &ranges) }
        let original = Array(joined.utf8)
        var spans: [Range<Int>] = []
        for r in ranges {
            var lo = r.lowerBound, hi = r.upperBound
            while lo > 0 && original[lo - 1] == UInt8(ascii: "*") { lo -= 1 }
            while hi < original.count && original[hi] == UInt8(ascii: "*") { hi += 1 }
            if let last = spans.last, last.upperBound > lo || (last.upperBound == lo && original[lo] == UInt8(ascii: "*")) {
                spans[spans.count - 1] = last.lowerBound..<max(hi, last.upperBound)
            } else {
                spans.append(lo..<hi)
            }
        }
        let modifiers = (caseInsensitive ? "c" : "") + (diacriticInsensitive ? "d" : "")
        return spans.map { StringPattern(String(decoding: original[$0], as: UTF8.self), modifiers: modifiers) }
    }

    /// Glob match of the folded literals against folded `text` (bytes of
    /// UTF-8: a literal only ever matches at character boundaries).
    func globMatches(_ text: [UInt8]) -> Bool {
        let parts = folded
        if parts.count == 1 { return text == parts[0] }
        let first = parts[0], last = parts[parts.count - 1]
        guard text.count >= first.count + last.count, text.starts(with: first),
              text[(text.count - last.count)...].elementsEqual(last) else { return false }
        var position = first.count
        let end = text.count - last.count
        for part in parts[1..<(parts.count - 1)] where !part.isEmpty {
            guard let found = StringPattern.find(part, in: text, from: position, to: end) else { return false }
            position = found + part.count
        }
        return true
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int, to end: Int) -> Int? {
        guard needle.count <= end - from else { return nil }
        var i = from
        while i + needle.count <= end {
            if haystack[i] == needle[0] && haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
