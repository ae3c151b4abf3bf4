/// Terms and their postings values, in term order, copied out of LMDB or
/// built for writing: one run's entries, a sealed block's, or a page's.
///
/// ```swift
/// var contents = RunContents()
/// contents.append(term: Array("latte".utf8), value: postings)
/// contents.terms[contents.term(0)]   // "latte"
/// ```
struct RunContents {
    var terms: [UInt8] = []
    var termEnds: [Int] = []
    var values: [UInt8] = []
    var valueEnds: [Int] = []

    var count: Int { termEnds.count }

    // Two appends of raw bytes (`memcpy`), not generic collections: a
    // flush appends an entry for every term of its new documents.
    @inline(__always)
    mutating func append(term: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        terms.append(contentsOf: term)
        termEnds.append(terms.count)
        values.append(contentsOf: value)
        valueEnds.append(values.count)
    }

    mutating func append(term: ArraySlice<UInt8>, value: ArraySlice<UInt8>) {
        term.withUnsafeBytes { t in value.withUnsafeBytes { v in append(term: t, value: v) } }
    }

    mutating func append(term: ArraySlice<UInt8>, value: [UInt8]) {
        term.withUnsafeBytes { t in value.withUnsafeBytes { v in append(term: t, value: v) } }
    }

    /// Appends `term` with the postings value of new documents `changes`
    /// (``PostingList/append(_:payloads:to:)``), encoded in place.
    mutating func append(term: ArraySlice<UInt8>, postings changes: ArraySlice<PostingChange>, payloads: [UInt8]) {
        terms.append(contentsOf: term)
        termEnds.append(terms.count)
        PostingList.append(changes, payloads: payloads, to: &values)
        valueEnds.append(values.count)
    }

    mutating func removeAll() {
        terms.removeAll(keepingCapacity: true)
        termEnds.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        valueEnds.removeAll(keepingCapacity: true)
    }

    func term(_ i: Int) -> Range<Int> { (i == 0 ? 0 : termEnds[i - 1])..<termEnds[i] }
    func value(_ i: Int) -> Range<Int> { (i == 0 ? 0 : valueEnds[i - 1])..<valueEnds[i] }
}
