import Foundation

/// Sorts byte strings (terms, keys) by their bytes, as LMDB orders keys,
/// without the reference counting that comparing `[UInt8]` values costs:
/// the strings are copied into one buffer and compared with `memcmp`.
///
/// ```swift
/// let order = ByteOrder.order(of: [Array("b".utf8), Array("a".utf8)])   // [1, 0]
/// ```
enum ByteOrder {
    /// The indices of `strings` in ascending byte order, each string
    /// preceded by its `prefixes` value (big-endian) when given.
    static func order(of strings: [[UInt8]], prefixes: [UInt32]? = nil) -> [Int] {
        var arena: [UInt8] = []
        arena.reserveCapacity(strings.reduce(0) { $0 + $1.count + 4 })
        var starts = [Int](repeating: 0, count: strings.count)
        var lengths = [Int](repeating: 0, count: strings.count)
        for (i, s) in strings.enumerated() {
            starts[i] = arena.count
            if let prefixes { withUnsafeBytes(of: prefixes[i].bigEndian) { arena.append(contentsOf: $0) } }
            arena.append(contentsOf: s)
            lengths[i] = arena.count - starts[i]
        }
        var order = Array(strings.indices)
        arena.withUnsafeBufferPointer { a in
            starts.withUnsafeBufferPointer { st in
                lengths.withUnsafeBufferPointer { ln in
                    let base = a.baseAddress!
                    order.sort { x, y in
                        let lx = ln[x], ly = ln[y]
                        let c = memcmp(base + st[x], base + st[y], min(lx, ly))
                        return c != 0 ? c < 0 : lx < ly
                    }
                }
            }
        }
        return order
    }
}
