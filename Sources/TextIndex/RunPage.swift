import LMDB

/// One page of a run of the open block: consecutive terms of the run with
/// their postings values, under one key of database `runs` (`space ‖ block ‖
/// u16 start ‖ the page's first term`).
///
/// A run's entries (terms in byte order) are split into pages after every
/// *boundary term*, one whose FNV-1a hash (``TermTable/hash(_:)``) has its top
/// five bits zero (one term in 32 on average), and at the run's end. The
/// split is a function of the run's terms alone, as the boundaries of
/// content-defined chunking are: a run changed in place (a replaced or
/// removed document) is split exactly as the same entries written at once
/// would be, so what is written depends on the flushes, never on the history
/// of a page. One key a page instead of one a term: a flush of 500 items puts
/// about 160 keys for its run instead of about 5,000.
///
/// ```
/// varint  n, the entry count (1 or more)
/// u32 × n the end of entry i in bytes from the first entry's start (big-endian)
/// per entry, by term: varint term length, the term, its postings value
///         (``PostingList``: to the entry's end)
/// ```
///
/// Reading checks every offset and length and throws
/// ``TextIndexError/corrupt(_:)`` rather than trap on damaged bytes.
///
/// ```swift
/// let page = try RunPage(value)
/// let i = try page.lowerBound(term)
/// if i < page.count, try KeyOrder.compare(page.entry(i).term, term) == 0 { … }
/// ```
struct RunPage {
    /// The table of entry ends.
    let ends: UnsafeRawBufferPointer
    /// The entries, after the table.
    let entries: UnsafeRawBufferPointer
    let count: Int

    init(_ bytes: UnsafeRawBufferPointer) throws {
        var r = ByteReader(bytes)
        let n = try r.int()
        guard n >= 1, n <= (bytes.count - r.offset) / 4 else { throw TextIndexError.corrupt("run page count") }
        let table = r.offset
        ends = UnsafeRawBufferPointer(rebasing: bytes[table..<table + 4 * n])
        entries = UnsafeRawBufferPointer(rebasing: bytes[(table + 4 * n)...])
        count = n
        guard end(n - 1) == entries.count else { throw TextIndexError.corrupt("run page length") }
    }

    @inline(__always)
    private func end(_ i: Int) -> Int {
        Int(UInt32(bigEndian: ends.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)))
    }

    /// Entry `i`'s term and postings value (bytes of the page).
    @inline(__always)
    func entry(_ i: Int) throws -> (term: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let start = i == 0 ? 0 : end(i - 1), stop = end(i)
        guard start < stop, stop <= entries.count else { throw TextIndexError.corrupt("run page entry") }
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: entries[start..<stop]))
        let length = try r.int()
        let termStart = start + r.offset
        guard length <= stop - termStart else { throw TextIndexError.corrupt("run page term") }
        return (UnsafeRawBufferPointer(rebasing: entries[termStart..<termStart + length]),
                UnsafeRawBufferPointer(rebasing: entries[(termStart + length)..<stop]))
    }

    /// The first entry whose term is not below `term` (``count`` when none).
    func lowerBound(_ term: UnsafeRawBufferPointer) throws -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if KeyOrder.compare(try entry(mid).term, term) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Appends every entry to `contents` (copied: the page's bytes are LMDB's).
    func append(to contents: inout RunContents) throws {
        for i in 0..<count {
            let (term, value) = try entry(i)
            contents.append(term: term, value: value)
        }
    }

    /// Whether a page ends after `term`.
    @inline(__always)
    static func isBoundary(_ term: UnsafeRawBufferPointer) -> Bool {
        TermTable.hash(term.bindMemory(to: UInt8.self)) >> 59 == 0
    }

    /// The pages of `contents` (a run's entries, in term order): ranges of
    /// entries, each ending after a boundary term or at the end.
    static func pages(_ contents: RunContents) -> [Range<Int>] {
        var pages: [Range<Int>] = []
        var start = 0
        contents.terms.withUnsafeBytes { terms in
            for i in 0..<contents.count {
                let range = contents.term(i)
                if isBoundary(UnsafeRawBufferPointer(rebasing: terms[range])) {
                    pages.append(start..<i + 1)
                    start = i + 1
                }
            }
        }
        if start < contents.count { pages.append(start..<contents.count) }
        return pages
    }

    /// Writes the page of `contents`' entries `range` (not empty) into `out`.
    static func encode(_ contents: RunContents, _ range: Range<Int>, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        PostingList.appendVarint(range.count, to: &out)
        let table = out.count
        let first = table + 4 * range.count
        var size = first
        for i in range { size += 5 + contents.term(i).count + contents.value(i).count }
        out.append(contentsOf: repeatElement(0, count: size - out.count))
        // Sized first, then written through pointers: a page a few dozen entries.
        let written = out.withUnsafeMutableBytes { o in
            contents.terms.withUnsafeBytes { terms in
                contents.values.withUnsafeBytes { values in
                    var w = first
                    for i in range {
                        let term = contents.term(i), value = contents.value(i)
                        var n = UInt(term.count)
                        while n >= 0x80 { o[w] = UInt8(truncatingIfNeeded: n) | 0x80; w += 1; n >>= 7 }
                        o[w] = UInt8(n)
                        w += 1
                        if !term.isEmpty {
                            o.baseAddress!.advanced(by: w).copyMemory(from: terms.baseAddress!.advanced(by: term.lowerBound), byteCount: term.count)
                        }
                        w += term.count
                        if !value.isEmpty {
                            o.baseAddress!.advanced(by: w).copyMemory(from: values.baseAddress!.advanced(by: value.lowerBound), byteCount: value.count)
                        }
                        w += value.count
                        o.storeBytes(of: UInt32(w - first).bigEndian, toByteOffset: table + 4 * (i - range.lowerBound), as: UInt32.self)
                    }
                    return w
                }
            }
        }
        out.removeLast(out.count - written)
    }
}
