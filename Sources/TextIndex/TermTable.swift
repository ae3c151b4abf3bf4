import Foundation

/// Interns the byte strings (terms) of one flush: each distinct term is
/// stored once in an arena and named by a dense `Int32`, so that counting
/// and grouping terms allocates nothing per word.
///
/// ```swift
/// var table = TermTable()
/// let a = table.intern(bytesOf("latte"))   // 0
/// let b = table.intern(bytesOf("latte"))   // 0 again
/// table.bytes(a)                            // "latte"
/// ```
///
/// Open addressing with linear probing over ``placement(_:)``. The hash only
/// places terms in memory; what is written is always sorted by bytes.
struct TermTable {
    private(set) var arena: [UInt8] = []
    private(set) var starts: [Int32] = []
    private(set) var lengths: [Int32] = []
    private var hashes: [UInt64] = []
    private var slots: [Int32]
    private let initialSlots: Int
    /// Per term, scratch for counting one document's terms without sorting:
    /// the document's stamp when the term was last seen, and its index there.
    var stamps: [UInt32] = []
    var local: [Int32] = []
    var stamp: UInt32 = 0

    var count: Int { starts.count }

    /// `expected`: about how many distinct terms (a flush: thousands; a document: a hundred).
    init(expected: Int = 2048) {
        var n = 64
        while n < expected * 2 { n *= 2 }
        initialSlots = n
        slots = [Int32](repeating: -1, count: n)
        arena.reserveCapacity(expected * 8)
    }

    /// FNV-1a over the bytes (fixed: the searcher tells terms apart by it).
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    /// Where a term goes in the table: a 64-bit hash of `bytes`, eight
    /// bytes a step (multiply and xor-shift, murmur3's finalizer at the
    /// end); FNV-1a, a byte a step, cost more than the rest of interning.
    /// Only memory placement depends on it.
    @inline(__always)
    static func placement(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let n = bytes.count
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ (UInt64(n) &* 0xFF51_AFD7_ED55_8CCD)
        guard let base = bytes.baseAddress else { return h }
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i + 8 <= n {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xC4CE_B9FE_1A85_EC53
            h ^= h >> 29
            i += 8
        }
        if i < n {
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < n {
                tail |= UInt64(base[i]) << shift
                shift += 8
                i += 1
            }
            h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
            h ^= h >> 29
        }
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        return h
    }

    /// The id of `bytes`, adding it when new.
    mutating func intern(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        let h = TermTable.placement(bytes)
        var mask = slots.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let id = slots[i]
            if id < 0 { break }
            if hashes[Int(id)] == h && equals(Int(id), bytes) { return id }
            i = (i + 1) & mask
        }
        let id = Int32(starts.count)
        starts.append(Int32(arena.count))
        lengths.append(Int32(bytes.count))
        hashes.append(h)
        stamps.append(0)
        local.append(0)
        arena.append(contentsOf: bytes)
        slots[i] = id
        if starts.count * 2 > slots.count {
            // Grow and re-place: keep the load under one half.
            slots = [Int32](repeating: -1, count: slots.count * 2)
            mask = slots.count - 1
            for (j, hj) in hashes.enumerated() {
                var k = Int(truncatingIfNeeded: hj) & mask
                while slots[k] >= 0 { k = (k + 1) & mask }
                slots[k] = Int32(j)
            }
        }
        return id
    }

    /// Starts counting a new document: every term is unseen again.
    mutating func nextStamp() {
        stamp &+= 1
        if stamp == 0 {
            for i in stamps.indices { stamps[i] = 0 }
            stamp = 1
        }
    }

    mutating func intern(_ bytes: [UInt8]) -> Int32 {
        bytes.withUnsafeBufferPointer { intern($0) }
    }

    @inline(__always)
    private func equals(_ id: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = Int(lengths[id])
        guard n == bytes.count else { return false }
        let s = Int(starts[id])
        return arena.withUnsafeBufferPointer { a in
            n == 0 || memcmp(a.baseAddress! + s, bytes.baseAddress!, n) == 0
        }
    }

    /// The bytes of term `id`.
    func bytes(_ id: Int32) -> ArraySlice<UInt8> {
        let s = Int(starts[Int(id)])
        return arena[s..<(s + Int(lengths[Int(id)]))]
    }

    /// `rank[id]`: the position of term `id` when all terms are sorted by bytes.
    func ranks() -> [Int32] {
        var order = Array(0..<Int32(count))
        arena.withUnsafeBufferPointer { a in
            starts.withUnsafeBufferPointer { st in
                lengths.withUnsafeBufferPointer { ln in
                    let base = a.baseAddress
                    order.sort { x, y in
                        let lx = Int(ln[Int(x)]), ly = Int(ln[Int(y)])
                        let n = min(lx, ly)
                        let c = n == 0 ? 0 : memcmp(base! + Int(st[Int(x)]), base! + Int(st[Int(y)]), n)
                        return c != 0 ? c < 0 : lx < ly
                    }
                }
            }
        }
        var rank = [Int32](repeating: 0, count: count)
        for (r, id) in order.enumerated() { rank[Int(id)] = Int32(r) }
        return rank
    }

    mutating func removeAll() {
        arena.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
        hashes.removeAll(keepingCapacity: true)
        stamps.removeAll(keepingCapacity: true)
        local.removeAll(keepingCapacity: true)
        stamp = 0
        slots = [Int32](repeating: -1, count: initialSlots)
    }
}
