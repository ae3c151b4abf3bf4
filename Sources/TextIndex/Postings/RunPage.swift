import Foundation
import LMDB

/// One page of a run: consecutive entries (term, postings value) of the run,
/// in term order, as the value of one key of database `runs` (`space ‖
/// block ‖ start ‖ first term`). A run is split into pages after every
/// *boundary term* (``isBoundary(_:)``: one term in 32, by a hash of its
/// bytes alone) once it holds about 11 KB, before an entry that would take
/// it past three LMDB overflow pages, and at its end (``pages(_:)``), so that
/// where pages end is a function of the run's entries alone, whatever
/// flushes wrote it.
///
/// Terms are front-coded (each after the bytes it shares with the term
/// before it), with a *restart* every ``restartInterval`` entries where the
/// whole term is written, as LevelDB's blocks are:
///
/// ```
/// varint  n, the entry count (1 or more)
/// u32 × ⌈n / 16⌉  where entry 16·k starts, in bytes from the first entry (big-endian)
/// per entry, by term:
///   varint  bytes shared with the previous term (0 at a restart)
///   varint  count of the bytes that follow, then those bytes
///   varint  length of the postings value, then the value (``PostingList``)
/// ```
///
/// ```swift
/// let page = try RunPage(bytes)
/// var at = try page.lowerBound(term, into: buffer)   // binary search of the restarts, then a scan
/// ```
struct RunPage {
    /// Entries between restarts (a whole term is written every this many).
    static let restartInterval = 16

    /// The restart table.
    let restarts: UnsafeRawBufferPointer
    /// The entries.
    let entries: UnsafeRawBufferPointer
    let count: Int

    init(_ bytes: UnsafeRawBufferPointer) throws {
        var r = ByteReader(bytes)
        let n: Int
        do throws(ByteError) { n = try r.int() } catch { throw TextIndexError.corrupt("run page count: \(error)") }
        let k = (n + RunPage.restartInterval - 1) / RunPage.restartInterval
        guard n >= 1, k <= (bytes.count - r.offset) / 4 else { throw TextIndexError.corrupt("run page count") }
        let table = r.offset
        restarts = UnsafeRawBufferPointer(rebasing: bytes[table..<table + 4 * k])
        entries = UnsafeRawBufferPointer(rebasing: bytes[(table + 4 * k)...])
        count = n
    }

    @inline(__always)
    private func restart(_ k: Int) throws -> Int {
        let at = Int(BigEndian.load(UInt32.self, from: restarts, at: 4 * k))
        guard at < entries.count else { throw TextIndexError.corrupt("run page restart") }
        return at
    }

    /// Where a scan of the page stands: the next entry's index and byte
    /// offset, and the term before it (in ``TermBuffer``).
    struct Position {
        var index = 0
        var offset = 0
    }

    /// Decodes the entry at `position` (before the page's end): its term
    /// into `term` (over the bytes it shares with the previous one, which
    /// `term` holds), its value as bytes of the page; advances `position`.
    @inline(__always)
    func entry(at position: inout Position, term: TermBuffer) throws -> UnsafeRawBufferPointer {
        var r = ByteReader(entries, offset: position.offset)
        let key: (shared: Int, suffix: UnsafeRawBufferPointer)
        do throws(ByteError) { key = try r.frontCodedKey() } catch { throw TextIndexError.corrupt("run page term: \(error)") }
        let restartsHere = position.index % RunPage.restartInterval == 0
        guard key.shared <= term.count, !restartsHere || key.shared == 0, key.shared + key.suffix.count <= TermBuffer.capacity else {
            throw TextIndexError.corrupt("run page term")
        }
        term.set(key.shared, key.suffix)
        let value: UnsafeRawBufferPointer
        do throws(ByteError) { value = try r.lengthPrefixed() } catch { throw TextIndexError.corrupt("run page value: \(error)") }
        position.offset = r.offset
        position.index += 1
        return value
    }

    /// The whole term of restart `k` (bytes of the page: shared is 0 there).
    @inline(__always)
    private func restartTerm(_ k: Int) throws -> UnsafeRawBufferPointer {
        var r = ByteReader(entries, offset: try restart(k))
        let key: (shared: Int, suffix: UnsafeRawBufferPointer)
        do throws(ByteError) { key = try r.frontCodedKey() } catch { throw TextIndexError.corrupt("run page term: \(error)") }
        guard key.shared == 0 else { throw TextIndexError.corrupt("run page restart term") }
        return key.suffix
    }

    /// The position of the first entry whose term is not below `term`
    /// (`index == count` when none is), its term in `buffer` and value
    /// returned (nil when none): a binary search of the restarts, then a
    /// scan of at most ``restartInterval`` entries.
    func lowerBound(_ term: UnsafeRawBufferPointer, _ buffer: TermBuffer,
                    at position: inout Position) throws -> UnsafeRawBufferPointer? {
        // The last restart whose term is below `term` (else the first).
        var low = 0, high = (count + RunPage.restartInterval - 1) / RunPage.restartInterval
        while high - low > 1 {
            let mid = (low + high) / 2
            if KeyOrder.compare(try restartTerm(mid), term) < 0 { low = mid } else { high = mid }
        }
        position = Position(index: low * RunPage.restartInterval, offset: try restart(low))
        buffer.count = 0
        while position.index < count {
            let value = try entry(at: &position, term: buffer)
            if KeyOrder.compare(buffer.bytes, term) >= 0 { return value }
        }
        return nil
    }

    /// Appends every entry to `contents` (copied: the page's bytes are LMDB's).
    func append(to contents: inout RunContents, _ buffer: TermBuffer) throws {
        var position = Position()
        buffer.count = 0
        while position.index < count {
            let value = try entry(at: &position, term: buffer)
            contents.append(term: buffer.bytes, value: value)
        }
        guard position.offset == entries.count else { throw TextIndexError.corrupt("run page length") }
    }

    /// Whether `term` may end a page: one term in 32, by its hash.
    @inline(__always)
    static func isBoundary(_ term: UnsafeRawBufferPointer) -> Bool {
        TermTable.hash(term.bindMemory(to: UInt8.self)) >> 59 == 0
    }

    /// A page is at most this many bytes (unless one entry is larger): an
    /// LMDB value of three overflow pages exactly (4,096 bytes each, less
    /// the 16-byte page header), so that a run's pages fill the file's
    /// pages rather than leave most of a last one empty.
    static let maximumBytes = 3 * 4096 - 16
    /// A boundary term ends a page only once it holds this many bytes.
    static let minimumBytes = 11 * 1024

    /// The pages of `contents` (a run's entries, in term order), greedily
    /// from the first: a page ends after a boundary term once it holds
    /// ``minimumBytes``, before an entry that would take it past
    /// ``maximumBytes``, or at the end. Where a page ends depends on its
    /// own entries alone, so a run paged from one of its page starts (an
    /// edit's) pages as the whole run does from there. `endsNaturally`: the
    /// last page would end where it does even if more entries followed (its
    /// last term is a boundary term and it is full enough), so that the
    /// pages after it are those of the entries after it alone.
    static func pages(_ contents: RunContents) -> (ranges: [Range<Int>], endsNaturally: Bool) {
        var pages: [Range<Int>] = []
        var start = 0
        var bytes = 0          // the entries' bytes so far
        var natural = false
        contents.terms.withUnsafeBytes { terms in
            for i in 0..<contents.count {
                let term = contents.term(i)
                var size = entrySize(terms, term, previous: i > start ? contents.term(i - 1) : nil,
                                     restarts: (i - start) % restartInterval == 0, value: contents.value(i).count)
                if i > start && headerSize(i + 1 - start) + bytes + size > maximumBytes {
                    pages.append(start..<i)
                    start = i
                    bytes = 0
                    size = entrySize(terms, term, previous: nil, restarts: true, value: contents.value(i).count)
                }
                bytes += size
                natural = headerSize(i + 1 - start) + bytes >= minimumBytes && isBoundary(UnsafeRawBufferPointer(rebasing: terms[term]))
                if natural {
                    pages.append(start..<i + 1)
                    start = i + 1
                    bytes = 0
                }
            }
        }
        if start < contents.count { pages.append(start..<contents.count) }
        return (pages, natural)
    }

    /// Bytes before the entries of a page of `n` entries.
    @inline(__always)
    static func headerSize(_ n: Int) -> Int {
        Varint.size(of: n) + 4 * ((n + restartInterval - 1) / restartInterval)
    }

    /// Bytes shared by the terms at `a` and `b` of `terms`.
    @inline(__always)
    static func sharedPrefix(_ terms: UnsafeRawBufferPointer, _ a: Range<Int>, _ b: Range<Int>) -> Int {
        FrontCoding.sharedCount(UnsafeRawBufferPointer(rebasing: terms[a]), UnsafeRawBufferPointer(rebasing: terms[b]))
    }

    /// The encoded size of an entry (term at `term` of `terms`, after the
    /// one at `previous`, a restart or not; a value of `value` bytes).
    @inline(__always)
    static func entrySize(_ terms: UnsafeRawBufferPointer, _ term: Range<Int>, previous: Range<Int>?, restarts: Bool,
                          value: Int) -> Int {
        let shared = restarts ? 0 : previous.map { sharedPrefix(terms, $0, term) } ?? 0
        return FrontCoding.entrySize(shared: shared, suffix: term.count - shared, value: value)
    }

    /// Writes the page of `contents`' entries `range` (not empty) into `out`.
    static func encode(_ contents: RunContents, _ range: Range<Int>, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        Varint.append(range.count, to: &out)
        let table = out.count
        let restartCount = (range.count + restartInterval - 1) / restartInterval
        let first = table + 4 * restartCount
        var size = first
        for i in range { size += 15 + contents.term(i).count + contents.value(i).count }
        out.append(contentsOf: repeatElement(0, count: size - out.count))
        // Sized first, then written through pointers: a page a few dozen entries.
        let written = out.withUnsafeMutableBytes { o in
            contents.terms.withUnsafeBytes { terms in
                contents.values.withUnsafeBytes { values in
                    var w = first
                    var previous = 0..<0
                    for i in range {
                        let k = i - range.lowerBound
                        let term = contents.term(i), value = contents.value(i)
                        var shared = 0
                        if k % restartInterval == 0 {
                            BigEndian.store(UInt32(w - first), into: o, at: table + 4 * (k / restartInterval))
                        } else {
                            shared = sharedPrefix(terms, previous, term)
                        }
                        FrontCoding.writeEntry(shared: shared, suffix: UnsafeRawBufferPointer(rebasing: terms[(term.lowerBound + shared)..<term.upperBound]),
                                               value: UnsafeRawBufferPointer(rebasing: values[value]), into: o, at: &w)
                        previous = term
                    }
                    return w
                }
            }
        }
        out.removeLast(out.count - written)
    }
}
