/// The fast path of ``TextFolding/fold(_:_:into:)`` for Latin text with
/// diacritics (Spanish, French, German: most of the corpus's non-ASCII
/// text), without ICU: every character is ASCII or one of the Latin letters
/// U+00C0…U+024F whose index fold (``TextFolding/Options/index``) is one to
/// three ASCII letters (`é` → `e`, `ß` → `ss`, `Ǆ` → `dz`).
///
/// The table is made from ICU itself, each letter folded alone and split
/// among letters, digits, `.` and `'` as `a` is, the first time it is
/// needed, so it is what this process's ICU gives. A word of such
/// letters folds to the concatenation of its letters' folds: folding is
/// case folding then normalization, and a letter that folds to ASCII is
/// one starter with nonspacing marks (removed), so none composes with its
/// neighbours; a combining mark in the text (U+0300…, never in the table)
/// sends it to ICU. `TokenizerTests` checks it against ICU on the whole
/// corpus.
enum LatinFolding {
    /// The first and last scalar of the table.
    static let first: UInt32 = 0xC0
    static let last: UInt32 = 0x24F

    /// Per scalar from ``first``: 0 when not in the fast set, else the fold's
    /// byte count (1 to 3) in the low byte and the bytes above it.
    static let folds: [UInt32] = (first...last).map { scalar in
        guard let s = Unicode.Scalar(scalar) else { return 0 }
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter: break
        default: return 0
        }
        var out: [UInt8] = []
        let utf8 = Array(String(Character(s)).utf8)
        utf8.withUnsafeBufferPointer { TextFolding.foldWithICU($0, .index, into: &out) }
        guard (1...3).contains(out.count), out.allSatisfy({ $0 &- 0x61 < 26 }) else { return 0 }
        // A letter to ICU's word rules as `a` is (ALetter): one word with
        // digits, `.` and `'` between letters.
        let c = String(Character(s))
        var probe = "x\(c)1\(c).\(c)'\(c)"
        var tokenizer = Tokenizer()
        var words: [Range<Int>] = []
        let count = probe.withUTF8 { bytes in
            tokenizer.icuWordRanges(in: bytes, into: &words)
            return bytes.count
        }
        guard words == [0..<count] else { return 0 }
        var packed = UInt32(out.count)
        for (i, b) in out.enumerated() { packed |= UInt32(b) << (8 * (i + 1)) }
        return packed
    }

    /// The table's entry for the two-byte UTF-8 character `lead`, `next`
    /// (0 when it is not in the fast set).
    @inline(__always)
    static func entry(_ table: UnsafeBufferPointer<UInt32>, _ lead: UInt8, _ next: UInt8) -> UInt32 {
        guard next & 0xC0 == 0x80 else { return 0 }
        let scalar = UInt32(lead & 0x1F) << 6 | UInt32(next & 0x3F)
        guard scalar >= first && scalar <= last else { return 0 }
        return table[Int(scalar - first)]
    }

    /// Whether every character of `bytes` is ASCII or in the fast set.
    static func covers(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        folds.withUnsafeBufferPointer { table in
            let n = bytes.count
            var i = 0
            while i < n {
                let b = bytes[i]
                if b < 0x80 { i += 1; continue }
                guard b >= 0xC3 && b <= 0xC9 && i + 1 < n && entry(table, b, bytes[i + 1]) != 0 else { return false }
                i += 2
            }
            return true
        }
    }

    /// `bytes` folded for the index into `out` (replacing its contents);
    /// false, with `out` in an unspecified state, when a character is not
    /// ASCII or in the fast set.
    static func fold(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        return folds.withUnsafeBufferPointer { table in
            let n = bytes.count
            var i = 0
            while i < n {
                let b = bytes[i]
                if b < 0x80 {
                    out.append(b &- 0x41 < 26 ? b | 0x20 : b)
                    i += 1
                    continue
                }
                guard b >= 0xC3 && b <= 0xC9 && i + 1 < n else { return false }
                var packed = entry(table, b, bytes[i + 1])
                if packed == 0 { return false }
                let count = Int(packed & 0xFF)
                for _ in 0..<count {
                    packed >>= 8
                    out.append(UInt8(truncatingIfNeeded: packed))
                }
                i += 2
            }
            return true
        }
    }
}
