import LMDB

/// The value of one sealed postings key (tier, term): the term's postings
/// values of the sealed blocks of one tier (``blocks`` consecutive blocks),
/// so that a query reads one key a tier, not one a block; a block's value
/// of ``PostingBound/minimumCount`` documents or more comes after its bound,
/// so that a query may skip it.
///
/// ```
/// u8      mask: bit s (0 to 3) set when block tier·4+s holds the term;
///         bit 4+s set when that block's part starts with a bound
/// per block, low to high: [bound (``PostingBound``)] then the block's
///         postings value (``PostingList``); each part but the last
///         preceded by its length, bound included (varint)
/// ```
enum PostingTier {
    static let shift: UInt32 = 2
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
        guard value.count >= 2 else { throw TextIndexError.corrupt("postings tier value") }
        var mask = value[0] & UInt8(1 << blocks - 1)
        let bounded = value[0] >> UInt8(blocks)
        guard mask != 0, bounded & ~mask == 0 else { throw TextIndexError.corrupt("postings tier mask") }
        var r = ByteReader(value, offset: 1)
        while mask != 0 {
            let sub = mask.trailingZeroBitCount
            mask &= mask - 1
            let length: Int
            do throws(ByteError) { length = mask == 0 ? value.count - r.offset : try r.int() } catch {
                throw TextIndexError.corrupt("postings tier: \(error)")
            }
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
        var mask: UInt8 = 0
        for (sub, _) in parts { mask |= 1 << UInt8(sub) }
        out.append(mask)
        var bound: [UInt8] = []
        for (i, (sub, bytes)) in parts.enumerated() {
            bound.removeAll(keepingCapacity: true)
            if try bytes.withUnsafeBytes({ try PostingBound.encode($0, into: &bound) }) {
                out[0] |= 1 << UInt8(blocks + sub)
            }
            if i < parts.count - 1 { Varint.append(bound.count + bytes.count, to: &out) }
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
