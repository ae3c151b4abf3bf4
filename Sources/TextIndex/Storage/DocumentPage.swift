import LMDB

/// A value of database `docs`: the records (``DocumentRecord``) of the 128
/// documents `page << 7 ..< (page + 1) << 7` of a space, under the key
/// `SpaceKey(space: s, page)`.
///
/// One key a document left LMDB's pages half full when many spaces grow
/// at once (each space appends at its own end of the tree, and a split
/// leaves the left half for good): 93 bytes a document of used pages for a
/// record of about 33. A page is stored in chunks that each fill one LMDB
/// overflow page (``DocumentChunks``; `Docs/Search.md`, "`docs` value").
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
/// try bytes.withUnsafeBytes { try DocumentPage.range(3, first: $0) }   // 10..<40: the record's bytes
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
        var slots: [[UInt8]] = []
        try DocumentPage.forEachRecord(in: bytes) { i, record in
            slots.append(contentsOf: repeatElement([], count: i - slots.count))
            slots.append(Array(record))
        }
        self.slots = slots
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
                w.bigEndian(UInt16(end))
            } else {
                w.bigEndian(UInt32(end))
            }
        }
        for s in slots { w.append(s) }
        return w.bytes
    }

    /// Every record of the page `bytes` (its chunks joined) with its slot, in slot order.
    static func forEachRecord(in bytes: UnsafeRawBufferPointer, _ body: (Int, UnsafeRawBufferPointer) throws -> Void) throws {
        let (width, count) = try header(bytes)
        let base = 2 + count * width
        var start = 0
        for i in 0..<count {
            let end = try end(i, width, count, bytes)
            guard start <= end, base + end <= bytes.count else { throw TextIndexError.corrupt("document page (\(bytes.count) bytes)") }
            if start < end { try body(i, UnsafeRawBufferPointer(rebasing: bytes[(base + start)..<(base + end)])) }
            start = end
        }
    }

    /// Slot `i`'s bytes in the whole page (its chunks joined) as read from
    /// the header and offsets in `first` (chunk 0, which holds them); nil
    /// when the slot holds no document.
    static func range(_ i: Int, first: UnsafeRawBufferPointer) throws -> Range<Int>? {
        let (width, count) = try header(first)
        guard i < count else { return nil }
        let start = i == 0 ? 0 : try end(i - 1, width, count, first)
        let end = try end(i, width, count, first)
        guard start <= end else { throw TextIndexError.corrupt("document page (offsets \(start), \(end))") }
        let base = 2 + count * width
        return start < end ? (base + start)..<(base + end) : nil
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
        return width == 2 ? Int(BigEndian.load(UInt16.self, from: bytes, at: at)) : Int(BigEndian.load(UInt32.self, from: bytes, at: at))
    }
}
