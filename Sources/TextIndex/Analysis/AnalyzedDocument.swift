import LMDB

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
         table: inout TermTable, scratch counts: inout [UInt16]) {
        // Term frequencies per (term, slot), counted in first-seen order with
        // the table's per-term stamps: no sorting, no hashing beyond interning.
        counts.removeAll(keepingCapacity: true)
        table.nextStamp()
        var ids: [Int32] = []
        for (name, values) in doc.fields {
            let field = IndexField(name: name)
            let slot = field.slot
            for value in values {
                var copy = value
                let words = copy.withUTF8 { bytes in
                    tokenizer.forEachIndexTerm(in: bytes, keepWhole: field == .keywords, ranges: &ranges) { term, _ in
                        let id = table.intern(term)
                        let local = Int(table.local(id, next: Int32(ids.count)))
                        if local == ids.count {
                            let base = ids.count &* IndexField.count
                            ids.append(id)
                            if counts.count < base + IndexField.count {
                                // Grown by doubling, zeroed a term at a time.
                                counts.append(contentsOf: repeatElement(0, count: max(IndexField.count, counts.count)))
                            } else {
                                counts.withUnsafeMutableBufferPointer { c in
                                    for s in base..<(base + IndexField.count) { c[s] = 0 }
                                }
                            }
                        }
                        counts.withUnsafeMutableBufferPointer { c in
                            let k = local &* IndexField.count &+ slot
                            if c[k] < UInt16.max { c[k] &+= 1 }
                        }
                    }
                }
                fieldLengths[slot] &+= UInt32(words)
            }
        }
        let norms = fieldLengths.map { FieldNorm.encode(Int($0)) }
        termIds = ids
        // Written through pointers: a payload is a few bytes for each term
        // of each document. At most a mask and, per field, a 3-byte
        // frequency (≤ 65,535) and a norm.
        let terms = ids.count
        var ends = [Int32](repeating: 0, count: terms)
        payloads = [UInt8](unsafeUninitializedCapacity: terms * (1 + 4 * IndexField.count)) { out, written in
            counts.withUnsafeBufferPointer { c in
                ends.withUnsafeMutableBufferPointer { e in
                    var w = 0
                    for k in 0..<terms {
                        let base = k * IndexField.count
                        var mask: UInt8 = 0
                        for slot in 0..<IndexField.count where c[base + slot] > 0 { mask |= 1 << UInt8(slot) }
                        out[w] = mask
                        w += 1
                        for slot in 0..<IndexField.count where c[base + slot] > 0 {
                            Varint.write(UInt64(c[base + slot]), into: out, at: &w)
                            out[w] = norms[slot]
                            w += 1
                        }
                        e[k] = Int32(w)
                    }
                    written = w
                }
            }
        }
        payloadEnds = ends
    }

    /// The payload of the `k`-th term.
    func payload(_ k: Int) -> ArraySlice<UInt8> {
        let start = k == 0 ? 0 : Int(payloadEnds[k - 1])
        return payloads[start..<Int(payloadEnds[k])]
    }
}
