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
    /// One term: where its bytes are in `arena`, its hash, and the scratch
    /// for counting one document's terms without sorting (the document's
    /// stamp when the term was last seen, and its index there). One array
    /// of these, not one array a field: adding a term is one append.
    struct Entry {
        var start: Int32
        var length: Int32
        var hash: UInt64
        var stamp: UInt32
        var local: Int32
    }

    private(set) var arena: [UInt8] = []
    private(set) var entries: [Entry] = []
    private var slots: [Int32]
    private let initialSlots: Int
    private(set) var stamp: UInt32 = 0

    var count: Int { entries.count }

    /// `expected`: about how many distinct terms (a flush: thousands; a document: a hundred).
    init(expected: Int = 2048) {
        var n = 64
        while n < expected * 2 { n *= 2 }
        initialSlots = n
        slots = [Int32](repeating: -1, count: n)
        arena.reserveCapacity(expected * 8)
        entries.reserveCapacity(expected)
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
    @inline(__always)
    mutating func intern(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        let h = TermTable.placement(bytes)
        // The probe reads the arrays through pointers: no bounds or
        // uniqueness checks on the path every word of every document takes.
        var free = 0
        let found: Int32 = slots.withUnsafeBufferPointer { sl in
            entries.withUnsafeBufferPointer { es in
                arena.withUnsafeBufferPointer { ar in
                    let n = bytes.count
                    let mask = sl.count - 1
                    var i = Int(truncatingIfNeeded: h) & mask
                    while true {
                        let id = sl[i]
                        if id < 0 { free = i; return -1 }
                        let e = es[Int(id)]
                        if e.hash == h && Int(e.length) == n
                            && (n == 0 || ByteOrder.equal(ar.baseAddress! + Int(e.start), bytes.baseAddress!, n)) {
                            return id
                        }
                        i = (i + 1) & mask
                    }
                }
            }
        }
        if found >= 0 { return found }
        return add(bytes, hash: h, slot: free)
    }

    /// Adds `bytes` (not in the table) at the free slot `i` its probe ended on.
    private mutating func add(_ bytes: UnsafeBufferPointer<UInt8>, hash h: UInt64, slot i: Int) -> Int32 {
        let id = Int32(entries.count)
        entries.append(Entry(start: Int32(arena.count), length: Int32(bytes.count), hash: h, stamp: 0, local: 0))
        arena.append(contentsOf: bytes)
        slots[i] = id
        if entries.count * 2 > slots.count {
            // Grow and re-place: keep the load under one half.
            slots = [Int32](repeating: -1, count: slots.count * 2)
            let mask = slots.count - 1
            for (j, e) in entries.enumerated() {
                var k = Int(truncatingIfNeeded: e.hash) & mask
                while slots[k] >= 0 { k = (k + 1) & mask }
                slots[k] = Int32(j)
            }
        }
        return id
    }

    /// The index of term `id` in the document being counted: `next` when
    /// the document has not had it yet (then recorded as its index), else
    /// the index recorded.
    @inline(__always)
    mutating func local(_ id: Int32, next: Int32) -> Int32 {
        let stamp = self.stamp
        return entries.withUnsafeMutableBufferPointer { es in
            if es[Int(id)].stamp == stamp { return es[Int(id)].local }
            es[Int(id)].stamp = stamp
            es[Int(id)].local = next
            return next
        }
    }

    /// Starts counting a new document: every term is unseen again.
    mutating func nextStamp() {
        stamp &+= 1
        if stamp == 0 {
            for i in entries.indices { entries[i].stamp = 0 }
            stamp = 1
        }
    }

    mutating func intern(_ bytes: [UInt8]) -> Int32 {
        bytes.withUnsafeBufferPointer { intern($0) }
    }

    /// The bytes of term `id`.
    func bytes(_ id: Int32) -> ArraySlice<UInt8> {
        let e = entries[Int(id)]
        return arena[Int(e.start)..<Int(e.start + e.length)]
    }

    /// `rank[id]`: the position of term `id` when all terms are sorted by bytes.
    ///
    /// Sorted by each term's first eight bytes as one big-endian integer
    /// (zero-padded) and by all its bytes only when those are equal: two
    /// terms whose padded prefixes differ compare as their bytes do (a
    /// shorter term that is a prefix of a longer one sorts first either way).
    func ranks() -> [Int32] {
        var keyed = [(prefix: UInt64, id: Int32)]()
        keyed.reserveCapacity(count)
        arena.withUnsafeBufferPointer { a in
            entries.withUnsafeBufferPointer { es in
                for id in 0..<es.count {
                    let s = Int(es[id].start), n = Int(es[id].length)
                    var p: UInt64 = 0
                    for k in 0..<8 { p = p << 8 | (k < n ? UInt64(a[s + k]) : 0) }
                    keyed.append((p, Int32(id)))
                }
                let base = a.baseAddress
                keyed.sort { x, y in
                    if x.prefix != y.prefix { return x.prefix < y.prefix }
                    let ex = es[Int(x.id)], ey = es[Int(y.id)]
                    let lx = Int(ex.length), ly = Int(ey.length)
                    let n = min(lx, ly)
                    let c = n == 0 ? 0 : memcmp(base! + Int(ex.start), base! + Int(ey.start), n)
                    return c != 0 ? c < 0 : lx < ly
                }
            }
        }
        var rank = [Int32](repeating: 0, count: count)
        for (r, k) in keyed.enumerated() { rank[Int(k.id)] = Int32(r) }
        return rank
    }

    mutating func removeAll() {
        arena.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        stamp = 0
        if slots.count == initialSlots {
            slots.withUnsafeMutableBufferPointer { $0.update(repeating: -1) }
        } else {
            slots = [Int32](repeating: -1, count: initialSlots)
        }
    }
}
