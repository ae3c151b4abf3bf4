/// A value of database `docs`: the records (``DocumentRecord``) of the 128
/// documents `page << 7 ..< (page + 1) << 7` of a space, under the key
/// `SpaceKey(space: s, page)`.
///
/// One key a document left LMDB's pages half full when many spaces grow
/// at once (each space appends at its own end of the tree, and a split
/// leaves the left half for good): 93 bytes a document of used pages for a
/// record of about 30. A page of 128 records is one value of about 4 KB,
/// an overflow page of its own (`Docs/Search.md`, "Documents").
///
/// ```
/// u8      offset width w: 2, or 4 when the records pass 64 KB
/// u8      slot count n (1…128; slots past n hold no document)
/// n × w   end offset of slot i's record (big-endian), from the start of
///         the records; equal to the previous end (0 for slot 0): no document
/// …       the records, in slot order
/// ```
///
/// ```swift
/// var page = DocumentPage()
/// page[3] = DocumentRecord.encode(doc)
/// let bytes = page.encoded()             // 02 04 00 00 00 00 00 00 00 1E, then the record
/// DocumentPage.record(3, in: bytes)      // the record's bytes
/// ```
struct DocumentPage {
    /// Documents a page: ids `p << shift ..< (p + 1) << shift`.
    static let shift: UInt32 = 7
    static let capacity = 1 << Int(shift)

    /// Record bytes by slot; empty: no document.
    private(set) var slots: [[UInt8]] = []

    init() {}

    /// The page stored as `bytes`.
    init(decoding bytes: UnsafeRawBufferPointer) throws {
        let (width, count) = try DocumentPage.header(bytes)
        slots.reserveCapacity(count)
        var start = 0
        for i in 0..<count {
            let end = try DocumentPage.end(i, width, count, bytes)
            guard start <= end else { throw TextIndexError.corrupt("document page (\(bytes.count) bytes)") }
            slots.append(Array(UnsafeRawBufferPointer(rebasing: bytes[(2 + count * width + start)..<(2 + count * width + end)])))
            start = end
        }
    }

    /// The page key of document `id`.
    static func page(of id: UInt32) -> UInt32 { id >> shift }
    /// Where document `id` is on its page.
    static func slot(of id: UInt32) -> Int { Int(id & UInt32(capacity - 1)) }

    /// Slot `i`'s record; set to empty to remove the document.
    subscript(_ i: Int) -> [UInt8] {
        get { i < slots.count ? slots[i] : [] }
        set {
            if i >= slots.count {
                guard !newValue.isEmpty else { return }
                slots.append(contentsOf: repeatElement([], count: i + 1 - slots.count))
            }
            slots[i] = newValue
            while let last = slots.last, last.isEmpty { slots.removeLast() }
        }
    }

    /// No document on the page: its key goes.
    var isEmpty: Bool { slots.isEmpty }

    func encoded() -> [UInt8] {
        let total = slots.reduce(0) { $0 + $1.count }
        let width = total > Int(UInt16.max) ? 4 : 2
        var w = ByteWriter(capacity: 2 + slots.count * width + total)
        w.byte(UInt8(width))
        w.byte(UInt8(slots.count))
        var end = 0
        for s in slots {
            end += s.count
            if width == 2 {
                withUnsafeBytes(of: UInt16(end).bigEndian) { w.append($0) }
            } else {
                w.uint32(UInt32(end))
            }
        }
        for s in slots { w.append(s) }
        return w.bytes
    }

    /// The record of slot `i` in the stored page `bytes`, or nil when the
    /// slot holds no document. Reads two offsets: no walk over the others.
    static func record(_ i: Int, in bytes: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        let (width, count) = try header(bytes)
        guard i < count else { return nil }
        let start = i == 0 ? 0 : try end(i - 1, width, count, bytes)
        let end = try end(i, width, count, bytes)
        guard start <= end else { throw TextIndexError.corrupt("document page (\(bytes.count) bytes)") }
        guard start < end else { return nil }
        let base = 2 + count * width
        return UnsafeRawBufferPointer(rebasing: bytes[(base + start)..<(base + end)])
    }

    /// Every record of the stored page with its slot, in slot order.
    static func forEachRecord(in bytes: UnsafeRawBufferPointer, _ body: (Int, UnsafeRawBufferPointer) throws -> Void) throws {
        let (width, count) = try header(bytes)
        let base = 2 + count * width
        var start = 0
        for i in 0..<count {
            let end = try end(i, width, count, bytes)
            guard start <= end else { throw TextIndexError.corrupt("document page (\(bytes.count) bytes)") }
            if start < end { try body(i, UnsafeRawBufferPointer(rebasing: bytes[(base + start)..<(base + end)])) }
            start = end
        }
    }

    private static func header(_ bytes: UnsafeRawBufferPointer) throws -> (width: Int, count: Int) {
        guard bytes.count >= 2, bytes[0] == 2 || bytes[0] == 4, bytes[1] >= 1, Int(bytes[1]) <= capacity,
              bytes.count >= 2 + Int(bytes[1]) * Int(bytes[0]) else {
            throw TextIndexError.corrupt("document page (\(bytes.count) bytes)")
        }
        return (Int(bytes[0]), Int(bytes[1]))
    }

    private static func end(_ i: Int, _ width: Int, _ count: Int, _ bytes: UnsafeRawBufferPointer) throws -> Int {
        let at = 2 + i * width
        let end = width == 2 ? Int(UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
            : Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        guard 2 + count * width + end <= bytes.count else { throw TextIndexError.corrupt("document page (\(bytes.count) bytes)") }
        return end
    }
}
