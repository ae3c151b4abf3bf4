/// What a document contributes to the postings: its distinct terms, sorted
/// by bytes, each with the posting payload (field mask, then per field term
/// frequency and length norm), and its field lengths for BM25 statistics.
///
/// ```swift
/// var tokenizer = Tokenizer()
/// let a = AnalyzedDocument(doc, tokenizer: &tokenizer)
/// a.terms      // [[UInt8]] sorted, e.g. "coffee", "game", "game::strategy", "latte", "oat", "strategy"
/// ```
///
/// Rules: every word of a field counts once toward its length and its term.
/// A compound word also adds its parts as terms, once each, not counted in
/// the length: the parts at lowercase-to-uppercase changes (`MyWindowClass`:
/// `my`, `window`, `class`, so that `"Window"w` finds it) and its runs of
/// letters and of digits (`kdiff3`: `kdiff`, `3`; `wiki.virtualsquare.org`:
/// `wiki`, `virtualsquare`, `org`), so that a reader's word finds it. Each value of
/// `keywords` is also a term whole (`game::strategy`) when it is more than
/// one word.
struct AnalyzedDocument {
    var terms: [[UInt8]] = []
    var payloads: [[UInt8]] = []
    /// Words per field slot.
    var fieldLengths = [UInt32](repeating: 0, count: IndexField.count)

    init(_ doc: IndexDocument, tokenizer: inout Tokenizer, ranges: inout [Range<Int>]) {
        var counts: [TermKey: SIMD8<UInt16>] = [:]
        counts.reserveCapacity(64)
        // Sorted names: the result must not depend on dictionary order (it
        // does not anyway, counts are summed, but keep it obviously so).
        for name in doc.fields.keys.sorted(by: utf8Less) {
            let field = IndexField(name: name)
            let slot = field.slot
            for value in doc.fields[name]! {
                var copy = value
                let words = copy.withUTF8 { bytes in
                    tokenizer.forEachIndexTerm(in: bytes, keepWhole: field == .keywords, ranges: &ranges) { term, _ in
                        counts[TermKey(term: term), default: SIMD8()][slot] &+= 1
                    }
                }
                fieldLengths[slot] &+= UInt32(words)
            }
        }
        let norms = fieldLengths.map { FieldNorm.encode(Int($0)) }
        let entries = Array(counts)
        let order = ByteOrder.order(of: entries.map(\.key.term))
        terms.reserveCapacity(order.count)
        payloads.reserveCapacity(order.count)
        for i in order {
            let (term, tf) = entries[i]
            var mask: UInt8 = 0
            for i in 0..<IndexField.count where tf[i] > 0 { mask |= 1 << UInt8(i) }
            var w = ByteWriter(capacity: 6)
            w.byte(mask)
            for i in 0..<IndexField.count where tf[i] > 0 {
                w.varint(UInt64(tf[i]))
                w.byte(norms[i])
            }
            terms.append(term.term)
            payloads.append(w.bytes)
        }
    }
}
