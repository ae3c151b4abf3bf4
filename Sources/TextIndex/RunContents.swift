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

    mutating func append(term: some Collection<UInt8>, value: some Collection<UInt8>) {
        terms.append(contentsOf: term)
        termEnds.append(terms.count)
        values.append(contentsOf: value)
        valueEnds.append(values.count)
    }

    mutating func append(term: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        terms.append(contentsOf: term)
        termEnds.append(terms.count)
        values.append(contentsOf: value)
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
