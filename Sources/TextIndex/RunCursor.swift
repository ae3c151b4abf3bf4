import Foundation
import LMDB

/// Reads one run's entries in term order through a cursor on database
/// `runs`, as a cursor reads keys: ``seek(_:)`` to the first term not below
/// one, then ``next()``. A term's entry is in the page with the last first
/// term not above it (``RunPage``): one seek, the page before it, then a
/// binary search in the page.
///
/// Entries point into LMDB's pages: valid until the transaction writes or ends.
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
    private var index = 0

    init(_ cursor: Cursor<[UInt8], [UInt8]>) {
        self.cursor = cursor
        prefix.reserveCapacity(RunCursor.prefixCount)
    }

    /// Whether `key` is a key of the run being read.
    @inline(__always)
    private func inRun(_ key: UnsafeRawBufferPointer) -> Bool {
        key.count > RunCursor.prefixCount
            && prefix.withUnsafeBytes { memcmp(key.baseAddress!, $0.baseAddress!, RunCursor.prefixCount) } == 0
    }

    /// The run's first entry whose term is not below the term of `key`
    /// (`space ‖ block ‖ start ‖ term`), or nil when none is.
    mutating func seek(_ key: UnsafeRawBufferPointer) throws -> Entry? {
        precondition(key.count >= RunCursor.prefixCount)
        prefix.removeAll(keepingCapacity: true)
        prefix.append(contentsOf: key[0..<RunCursor.prefixCount])
        let term = UnsafeRawBufferPointer(rebasing: key[RunCursor.prefixCount...])
        let after = try cursor.seekBytes(atOrAfter: key)
        if let after, after.key.count == key.count, memcmp(after.key.baseAddress!, key.baseAddress!, key.count) == 0 {
            return try open(after.value, at: 0)
        }
        // The page before holds the term when it is of this run.
        let before = after == nil ? try cursor.lastBytes() : try cursor.previousBytes()
        if let before, inRun(before.key) {
            let page = try RunPage(before.value)
            let i = try page.lowerBound(term)
            if i < page.count { return try open(before.value, at: i) }
            return try nextPage()
        }
        // No page of the run starts at or before the term: its first page, if any.
        guard let first = try cursor.seekBytes(atOrAfter: UnsafeRawBufferPointer(rebasing: key[0..<RunCursor.prefixCount])),
              inRun(first.key) else { page = nil; return nil }
        return try open(first.value, at: 0)
    }

    /// The entry after the last one returned, or nil at the run's end.
    mutating func next() throws -> Entry? {
        guard let page else { return nil }
        index += 1
        if index < page.count { return try page.entry(index) }
        return try nextPage()
    }

    private mutating func open(_ value: UnsafeRawBufferPointer, at i: Int) throws -> Entry {
        let page = try RunPage(value)
        self.page = page
        index = i
        return try page.entry(i)
    }

    private mutating func nextPage() throws -> Entry? {
        guard let e = try cursor.nextBytes(), inRun(e.key) else { page = nil; return nil }
        return try open(e.value, at: 0)
    }
}
