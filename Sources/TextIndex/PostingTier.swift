/// The value of one sealed postings key (tier, term): the term's postings
/// values of the sealed blocks of one tier (``blocks`` consecutive blocks),
/// so that a query reads one key a tier, not one a block.
///
/// ```
/// u8      mask: bit s set when block tier·4+s holds the term
/// per set bit, low to high: the block's postings value (``PostingList``),
///         each but the last preceded by its length (varint)
/// ```
enum PostingTier {
    static let shift: UInt32 = 2
    static let blocks = 1 << Int(shift)

    /// Calls `body` with each block in the tier value (the block's offset
    /// in the tier, and its postings value), in block order.
    @inline(__always)
    static func forEach(_ value: UnsafeRawBufferPointer,
                        _ body: (Int, UnsafeRawBufferPointer) throws -> Void) throws {
        guard value.count >= 2 else { throw TextIndexError.corrupt("postings tier value") }
        var mask = value[0]
        guard mask != 0, mask < 1 << blocks else { throw TextIndexError.corrupt("postings tier mask") }
        var r = ByteReader(value, offset: 1)
        while mask != 0 {
            let sub = mask.trailingZeroBitCount
            mask &= mask - 1
            let length = mask == 0 ? value.count - r.offset : try r.int()
            guard length > 0, r.offset + length <= value.count else { throw TextIndexError.corrupt("postings tier length") }
            try body(sub, UnsafeRawBufferPointer(rebasing: value[r.offset..<(r.offset + length)]))
            r.offset += length
        }
    }

    /// A tier value of `parts` (block offset in the tier, postings value;
    /// increasing offsets, non-empty values) into `out` (empty when none).
    static func encode(_ parts: [(Int, ArraySlice<UInt8>)], into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        guard !parts.isEmpty else { return }
        var mask: UInt8 = 0
        for (sub, _) in parts { mask |= 1 << UInt8(sub) }
        out.append(mask)
        for (i, (_, bytes)) in parts.enumerated() {
            if i < parts.count - 1 { PostingList.appendVarint(bytes.count, to: &out) }
            out.append(contentsOf: bytes)
        }
    }

    /// The parts of a stored tier value, copied.
    static func parts(_ value: UnsafeRawBufferPointer) throws -> [(Int, ArraySlice<UInt8>)] {
        var parts: [(Int, ArraySlice<UInt8>)] = []
        try forEach(value) { sub, bytes in parts.append((sub, ArraySlice(bytes))) }
        return parts
    }
}
