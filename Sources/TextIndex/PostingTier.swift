/// The value of one sealed postings key (tier, term): the term's postings
/// values of the sealed blocks of one tier (``blocks`` consecutive blocks),
/// so that a query reads one key a tier, not one a block; a block's value
/// of ``PostingBound/minimumCount`` documents or more comes after its bound,
/// so that a query may skip it.
///
/// ```
/// u16     blocks (big-endian): bit s (0 to 15) set when block tier·16+s holds the term
/// u16     bounded (big-endian): bit s set when that block's part starts with a bound
/// per block, low to high: [bound (``PostingBound``)] then the block's
///         postings value (``PostingList``); each part but the last
///         preceded by its length, bound included (varint)
/// ```
///
/// Tiers of 16 blocks: a word costs one B-tree descent a tier, and at four
/// times the corpus (72 blocks) 4 tiers and up to 15 staged blocks instead
/// of 17 tiers of 4 (Docs/Benchmarks.md, "Queries at 4×").
enum PostingTier {
    static let shift: UInt32 = 4
    static let blocks = 1 << Int(shift)

    /// Calls `body` with each block in the tier value (the block's offset
    /// in the tier, and its postings value), in block order.
    @inline(__always)
    static func forEach(_ value: UnsafeRawBufferPointer,
                        _ body: (Int, UnsafeRawBufferPointer) throws -> Void) throws {
        try forEachBounded(value) { sub, bytes, _ in try body(sub, bytes) }
    }

    /// ``forEach(_:_:)`` with each block's bound (``PostingBound``; empty
    /// when the block's value has none).
    @inline(__always)
    static func forEachBounded(_ value: UnsafeRawBufferPointer,
                               _ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        guard value.count >= 5 else { throw TextIndexError.corrupt("postings tier value") }
        var mask = UInt16(value[0]) << 8 | UInt16(value[1])
        let bounded = UInt16(value[2]) << 8 | UInt16(value[3])
        guard mask != 0, bounded & ~mask == 0 else { throw TextIndexError.corrupt("postings tier mask") }
        var r = ByteReader(value, offset: 4)
        while mask != 0 {
            let sub = mask.trailingZeroBitCount
            mask &= mask - 1
            let length = mask == 0 ? value.count - r.offset : try r.int()
            guard length > 0, r.offset + length <= value.count else { throw TextIndexError.corrupt("postings tier length") }
            var part = UnsafeRawBufferPointer(rebasing: value[r.offset..<(r.offset + length)])
            var bound = UnsafeRawBufferPointer(start: part.baseAddress, count: 0)
            if bounded & (1 << sub) != 0 {
                let n = try PostingBound.length(part)
                guard n < part.count else { throw TextIndexError.corrupt("postings tier bound") }
                bound = UnsafeRawBufferPointer(rebasing: part[..<n])
                part = UnsafeRawBufferPointer(rebasing: part[n...])
            }
            try body(sub, part, bound)
            r.offset += length
        }
    }

    /// A tier value of `parts` (block offset in the tier, postings value;
    /// increasing offsets, non-empty values) into `out` (empty when none),
    /// each value of ``PostingBound/minimumCount`` documents or more after
    /// its bound.
    static func encode(_ parts: [(Int, ArraySlice<UInt8>)], into out: inout [UInt8]) throws {
        out.removeAll(keepingCapacity: true)
        guard !parts.isEmpty else { return }
        var mask: UInt16 = 0
        for (sub, _) in parts { mask |= 1 << UInt16(sub) }
        var bounded: UInt16 = 0
        out.append(contentsOf: [UInt8(mask >> 8), UInt8(mask & 0xFF), 0, 0])
        var bound: [UInt8] = []
        for (i, (sub, bytes)) in parts.enumerated() {
            bound.removeAll(keepingCapacity: true)
            if try bytes.withUnsafeBytes({ try PostingBound.encode($0, into: &bound) }) {
                bounded |= 1 << UInt16(sub)
                out[2] = UInt8(bounded >> 8)
                out[3] = UInt8(bounded & 0xFF)
            }
            if i < parts.count - 1 { PostingList.appendVarint(bound.count + bytes.count, to: &out) }
            out.append(contentsOf: bound)
            out.append(contentsOf: bytes)
        }
    }

    /// The parts of a stored tier value (postings values, without bounds), copied.
    static func parts(_ value: UnsafeRawBufferPointer) throws -> [(Int, ArraySlice<UInt8>)] {
        var parts: [(Int, ArraySlice<UInt8>)] = []
        try forEach(value) { sub, bytes in parts.append((sub, ArraySlice(bytes))) }
        return parts
    }
}
