/// What a document contributes to the postings: its distinct terms (ids in
/// the writer's ``TermTable``), each with the posting payload (field mask,
/// then per field term frequency and length norm), and its field lengths
/// for the BM25 statistics.
///
/// ```swift
/// let a = AnalyzedDocument(doc, tokenizer: &tokenizer, ranges: &ranges, table: &table, scratch: &scratch)
/// a.termIds        // ascending term ids
/// a.payload(0)     // mask, tf, norm… of the first
/// ```
///
/// Rules (``Tokenizer/indexTerms(_:keepWhole:)``): every word of a field
/// counts once toward its length and its term; compound words add their
/// parts as terms (not counted in the length); each value of `keywords` is
/// also a term whole when it is more than one word.
struct AnalyzedDocument {
    /// Distinct term ids.
    var termIds: [Int32] = []
    /// Payloads, concatenated in the order of `termIds`.
    var payloads: [UInt8] = []
    var payloadEnds: [Int32] = []
    /// Words per field slot.
    var fieldLengths = [UInt32](repeating: 0, count: IndexField.count)

    init(termIds: [Int32], payloads: [UInt8], payloadEnds: [Int32], fieldLengths: [UInt32]) {
        self.termIds = termIds
        self.payloads = payloads
        self.payloadEnds = payloadEnds
        self.fieldLengths = fieldLengths
    }

    init(_ doc: IndexDocument, tokenizer: inout Tokenizer, ranges: inout [Range<Int>],
         table: inout TermTable, scratch occurrences: inout [UInt64]) {
        occurrences.removeAll(keepingCapacity: true)
        for (name, values) in doc.fields {
            let field = IndexField(name: name)
            let slot = UInt64(field.slot)
            for value in values {
                var copy = value
                let words = copy.withUTF8 { bytes in
                    tokenizer.forEachIndexTerm(in: bytes, keepWhole: field == .keywords, ranges: &ranges) { term, _ in
                        occurrences.append(UInt64(UInt32(table.intern(term))) << 8 | slot)
                    }
                }
                fieldLengths[field.slot] &+= UInt32(words)
            }
        }
        // Sorting (term id, slot) pairs groups each term's fields, low slot first.
        occurrences.sort()
        let norms = fieldLengths.map { FieldNorm.encode(Int($0)) }
        termIds.reserveCapacity(occurrences.count / 2)
        payloads.reserveCapacity(occurrences.count * 2)
        var i = 0
        var tf = [UInt32](repeating: 0, count: IndexField.count)
        while i < occurrences.count {
            let term = occurrences[i] >> 8
            var mask: UInt8 = 0
            while i < occurrences.count && occurrences[i] >> 8 == term {
                let slot = Int(occurrences[i] & 0xFF)
                if mask & (1 << UInt8(slot)) == 0 { tf[slot] = 0 }
                mask |= 1 << UInt8(slot)
                tf[slot] &+= 1
                i += 1
            }
            termIds.append(Int32(truncatingIfNeeded: term))
            payloads.append(mask)
            var m = mask
            while m != 0 {
                let slot = m.trailingZeroBitCount
                m &= m - 1
                var v = min(tf[slot], UInt32(UInt16.max))
                while v >= 0x80 { payloads.append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
                payloads.append(UInt8(v))
                payloads.append(norms[slot])
            }
            payloadEnds.append(Int32(payloads.count))
        }
    }

    /// The payload of the `k`-th term.
    func payload(_ k: Int) -> ArraySlice<UInt8> {
        let start = k == 0 ? 0 : Int(payloadEnds[k - 1])
        return payloads[start..<Int(payloadEnds[k])]
    }
}
