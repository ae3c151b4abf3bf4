import LMDB

/// The value of an attribute-index key (database `values`, key
/// `space ‖ attribute key ‖ u32 block`): which documents of one postings
/// block hold that attribute value, as their offsets in the block.
///
/// One key per value and block, not per document: most documents share
/// their kind, domain and expiration with many others, and a key per
/// document (each arriving in id order in the middle of the database,
/// where LMDB splits pages in half) cost twice the bytes of its keys.
///
/// ```
/// fewer than 256 documents: u16 offsets, big-endian, ascending (2 bytes each)
/// 256 or more:              512 bytes, bit o % 8 (low first) of byte o / 8
///                           set when offset o holds the value
/// ```
///
/// The two lengths never meet (a list is at most 510 bytes), and which is
/// written is a function of the set alone, so a rebuild writes the same bytes.
///
/// ```swift
/// let value = AttributeBlock.encode([3, 9])          // 00 03 00 09
/// try AttributeBlock.forEachDocument(in: bytes, block: 2) { id in print(id) }   // 8195, 8201
/// try AttributeBlock.forEachDocument(key: entry.key, value: entry.value) { id in … }   // a `values` entry
/// ```
enum AttributeBlock {
    /// Offsets from which a bitmap is written instead of a list.
    static let bitmapThreshold = 256
    static let bitmapBytes = TextIndex.blockSize / 8

    /// The value for `offsets` (ascending, unique, not empty).
    static func encode(_ offsets: [UInt16]) -> [UInt8] {
        if offsets.count >= bitmapThreshold {
            var bitmap = [UInt8](repeating: 0, count: bitmapBytes)
            for o in offsets { bitmap[Int(o) >> 3] |= 1 << (o & 7) }
            return bitmap
        }
        var list: [UInt8] = []
        list.reserveCapacity(offsets.count * 2)
        for o in offsets { BigEndian.append(o, to: &list) }
        return list
    }

    /// Calls `body` with each offset of `value`, ascending.
    static func forEachOffset(in value: UnsafeRawBufferPointer, _ body: (UInt16) -> Void) throws {
        if value.count == bitmapBytes {
            for (i, byte) in value.enumerated() where byte != 0 {
                var bits = byte
                while bits != 0 {
                    body(UInt16(i << 3 | bits.trailingZeroBitCount))
                    bits &= bits - 1
                }
            }
            return
        }
        guard !value.isEmpty, value.count < bitmapBytes, value.count % 2 == 0 else {
            throw TextIndexError.corrupt("attribute index value of \(value.count) bytes")
        }
        var i = 0
        while i < value.count {
            let o = BigEndian.load(UInt16.self, from: value, at: i)
            guard Int(o) < TextIndex.blockSize else { throw TextIndexError.corrupt("attribute index offset \(o)") }
            body(o)
            i += 2
        }
    }

    /// The offsets of `value`, ascending.
    static func offsets(in value: UnsafeRawBufferPointer) throws -> [UInt16] {
        var result: [UInt16] = []
        result.reserveCapacity(value.count == bitmapBytes ? bitmapThreshold : value.count / 2)
        try forEachOffset(in: value) { result.append($0) }
        return result
    }

    /// What a flush appends after an attribute key to say that document
    /// `id` gains (`adds`) or loses it: `u32 block ‖ u16 offset ‖ 1 or 0`,
    /// big-endian, so that the changes of one key and block sort together
    /// and in offset order.
    static func change(of id: UInt32, adds: Bool) -> [UInt8] {
        var change: [UInt8] = []
        change.reserveCapacity(7)
        BigEndian.append(id >> TextIndex.blockShift, to: &change)
        BigEndian.append(UInt16(id & UInt32(TextIndex.blockSize - 1)), to: &change)
        change.append(adds ? 1 : 0)
        return change
    }

    /// Bytes of a ``change(of:adds:)`` after its block: what a flush drops
    /// from a change to get the `values` key.
    static let changeBytesAfterBlock = 3

    /// Calls `body` with the document id of each offset of `value`, a value
    /// of block `block`, ascending.
    static func forEachDocument(in value: UnsafeRawBufferPointer, block: UInt32, _ body: (UInt32) -> Void) throws {
        let base = block << TextIndex.blockShift
        try forEachOffset(in: value) { body(base | UInt32($0)) }
    }

    /// Calls `body` with the document id of each document of a `values`
    /// entry: its block from the key's last 4 bytes, its offsets from the value.
    static func forEachDocument(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                                _ body: (UInt32) -> Void) throws {
        guard key.count >= 4 else { throw TextIndexError.corrupt("attribute index key of \(key.count) bytes") }
        let block = BigEndian.load(UInt32.self, from: key, at: key.count - 4)
        try forEachDocument(in: value, block: block, body)
    }
}
