import Foundation
import LMDB

/// Reads one run's entries in term order through a cursor on database
/// `runs`, as a cursor reads keys: ``seek(_:)`` to the first term not below
/// one, then ``next()``. A term's entry is in the page with the last first
/// term not above it (``page(holding:_:)``: one seek, the page before it),
/// then a binary search of the page's restarts and a short scan.
///
/// An entry's value points into LMDB's pages (valid until the transaction
/// writes or ends); its term into the cursor's ``TermBuffer`` (valid until
/// the next call: terms are front-coded in a page).
///
/// ```swift
/// var run = RunCursor(cursor)
/// var entry = try run.seek(key)        // key: space ‖ block ‖ start ‖ term
/// while let e = entry, e.term.starts(with: prefix) { …; entry = try run.next() }
/// ```
struct RunCursor {
    typealias Entry = (term: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    /// Bytes of a run's key before the term: `space ‖ block ‖ start`.
    static let prefixCount = 10

    let cursor: Cursor<[UInt8], [UInt8]>
    private var prefix: [UInt8] = []
    private var page: RunPage?
    private var position = RunPage.Position()
    private let term = TermBuffer()

    init(_ cursor: Cursor<[UInt8], [UInt8]>) {
        self.cursor = cursor
        prefix.reserveCapacity(RunCursor.prefixCount)
    }

    /// Whether `key` is a page key of the run whose key starts with the
    /// first ``prefixCount`` bytes of `run`.
    @inline(__always)
    static func isPage(_ key: UnsafeRawBufferPointer, of run: UnsafeRawBufferPointer) -> Bool {
        key.count > prefixCount && memcmp(key.baseAddress!, run.baseAddress!, prefixCount) == 0
    }

    @inline(__always)
    private func inRun(_ key: UnsafeRawBufferPointer) -> Bool {
        prefix.withUnsafeBytes { RunCursor.isPage(key, of: $0) }
    }

    /// The page of a run that holds the term of `key` (`space ‖ block ‖
    /// start ‖ term`), or would: the last that starts at or before it, else
    /// the run's first; nil when the run has no page. `cursor` is left on it.
    static func page(holding key: UnsafeRawBufferPointer, _ cursor: Cursor<[UInt8], [UInt8]>) throws -> Cursor<[UInt8], [UInt8]>.RawEntry? {
        precondition(key.count >= prefixCount)
        let after = try cursor.seekBytes(atOrAfter: key)
        if let after, after.key.count == key.count, memcmp(after.key.baseAddress!, key.baseAddress!, key.count) == 0 {
            return after
        }
        let before = after == nil ? try cursor.lastBytes() : try cursor.previousBytes()
        if let before, isPage(before.key, of: key) { return before }
        // No page of the run starts at or before the term: its first page, if any.
        guard let first = try cursor.seekBytes(atOrAfter: UnsafeRawBufferPointer(rebasing: key[0..<prefixCount])),
              isPage(first.key, of: key) else { return nil }
        return first
    }

    /// The run's first entry whose term is not below the term of `key`
    /// (`space ‖ block ‖ start ‖ term`), or nil when none is.
    mutating func seek(_ key: UnsafeRawBufferPointer) throws -> Entry? {
        guard let found = try RunCursor.page(holding: key, cursor) else { page = nil; return nil }
        prefix.removeAll(keepingCapacity: true)
        prefix.append(contentsOf: key[0..<RunCursor.prefixCount])
        let page = try RunPage(found.value)
        self.page = page
        // Past the page's last term: the next page's first.
        if let value = try page.lowerBound(UnsafeRawBufferPointer(rebasing: key[RunCursor.prefixCount...]), term, at: &position) {
            return (term.bytes, value)
        }
        return try nextPage()
    }

    /// The entry after the last one returned, or nil at the run's end.
    mutating func next() throws -> Entry? {
        guard let page else { return nil }
        if position.index < page.count {
            let value = try page.entry(at: &position, term: term)
            return (term.bytes, value)
        }
        return try nextPage()
    }

    private mutating func nextPage() throws -> Entry? {
        guard let e = try cursor.nextBytes(), inRun(e.key) else { page = nil; return nil }
        let page = try RunPage(e.value)
        self.page = page
        position = RunPage.Position()
        term.count = 0
        let value = try page.entry(at: &position, term: term)
        return (term.bytes, value)
    }
}
