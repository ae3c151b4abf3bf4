/// A term (and the block its postings key belongs to) as a dictionary key,
/// hashed over its bytes at once rather than byte by byte as `[UInt8]` is.
///
/// ```swift
/// var counts: [TermKey: Int] = [:]
/// counts[TermKey(block: 0, term: Array("latte".utf8)), default: 0] += 1
/// ```
///
/// Only for in-memory grouping: nothing written depends on its hash, every
/// write is sorted by bytes first.
struct TermKey: Hashable {
    var block: UInt32
    var term: [UInt8]

    init(block: UInt32 = 0, term: [UInt8]) {
        self.block = block
        self.term = term
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(block)
        term.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (a: TermKey, b: TermKey) -> Bool { a.block == b.block && a.term == b.term }

    /// Block first, then term bytes: the order of postings keys.
    static func < (a: TermKey, b: TermKey) -> Bool {
        a.block != b.block ? a.block < b.block : a.term.lexicographicallyPrecedes(b.term)
    }
}
