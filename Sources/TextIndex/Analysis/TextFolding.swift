import CICU

/// Normalization and folding of text, the same for what is indexed and what
/// is asked, so that a query word and a document word meet.
///
/// ```swift
/// TextFolding.fold("Introducción", [.case, .diacritics])   // "introduccion"
/// TextFolding.fold("GRÜßEN", .case)                        // "grüssen"
/// TextFolding.fold("ﬁle")                                  // "ﬁle" (NFC only)
/// ```
///
/// - `.case`: NFKC with full case folding (ICU's NFKC_Casefold: `ß` → `ss`,
///   `ﬁ` → `fi`, `Ⅻ` → `xii`, default ignorables removed).
/// - `.diacritics`: NFD, nonspacing marks (general category Mn) removed, NFC.
///   This is the rule of the specification, applied literally: besides Latin
///   accents it also drops Japanese voiced-sound marks (`ブ` → `フ`) and
///   Indic vowel signs that are Mn; both sides are folded alike, so such
///   words still meet, with some loss of precision.
/// - no option: NFC only (canonically equivalent strings become equal).
///
/// Pure-ASCII input takes a fast path without ICU: byte-wise lowercase for
/// `.case`, identity otherwise (ASCII is NFC/NFKC and has no marks). So does
/// `.index` folding of text whose other characters are Latin letters that
/// fold to ASCII (`é` → `e`, `ß` → `ss`; ``LatinFolding``).
public enum TextFolding {
    /// What to fold.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// NFKC and full case folding.
        public static let `case` = Options(rawValue: CICU_FOLD_CASE)
        /// Diacritics removed (NFD, nonspacing marks dropped, NFC).
        public static let diacritics = Options(rawValue: CICU_FOLD_DIACRITICS)
        /// What the index stores and free text is matched with.
        public static let index: Options = [.case, .diacritics]
    }

    /// `text` folded by `options`.
    public static func fold(_ text: String, _ options: Options = []) -> String {
        var out: [UInt8] = []
        var copy = text
        copy.withUTF8 { fold($0, options, into: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Folds UTF-8 `bytes` by `options`, replacing the contents of `out`.
    public static func fold(_ bytes: UnsafeBufferPointer<UInt8>, _ options: Options, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        if isASCII(bytes) {
            out.append(contentsOf: bytes)
            if options.contains(.case) {
                out.withUnsafeMutableBufferPointer { o in
                    for i in o.indices where o[i] &- 0x41 < 26 { o[i] |= 0x20 }
                }
            }
            return
        }
        // Latin letters with diacritics that fold to ASCII: a table, no ICU.
        if options == .index && LatinFolding.fold(bytes, into: &out) { return }
        foldWithICU(bytes, options, into: &out)
    }

    /// Whether every byte is ASCII, eight bytes at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let n = bytes.count
        var i = 0
        let raw = UnsafeRawPointer(base)
        while i + 8 <= n {
            if raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            i += 8
        }
        while i < n {
            if base[i] >= 0x80 { return false }
            i += 1
        }
        return true
    }

    /// `text` folded by `options` through ICU even when it is ASCII: what
    /// the ASCII fast path of ``fold(_:_:)`` is checked against.
    public static func foldThroughICU(_ text: String, _ options: Options = []) -> String {
        var out: [UInt8] = []
        var copy = text
        copy.withUTF8 { foldWithICU($0, options, into: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    static func foldWithICU(_ bytes: UnsafeBufferPointer<UInt8>, _ options: Options, into out: inout [UInt8]) {
        // NFKC can expand a character up to 18 times (U+FDFA); start at 3×
        // plus slack and retry with the exact size ICU reports.
        var capacity = bytes.count * 3 + 16
        while true {
            var needed: Int32 = 0
            out = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                needed = cicu_fold(bytes.baseAddress, Int32(bytes.count), options.rawValue,
                                   buffer.baseAddress, Int32(capacity))
                count = needed >= 0 && Int(needed) <= capacity ? Int(needed) : 0
            }
            if needed < 0 {
                // ICU failed (out of memory): keep the text unfolded rather than lose it.
                out = Array(bytes)
                return
            }
            if Int(needed) <= capacity { return }
            capacity = Int(needed)
        }
    }
}
