import Foundation
import LMDB

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
            if let prefixes { BigEndian.append(prefixes[i], to: &arena) }
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

    /// Whether `n` bytes at `a` and `b` are equal, eight at a time, without
    /// a call: terms are a few bytes, where `memcmp`'s call costs more than
    /// the comparing.
    @inline(__always)
    static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i + 8 <= n {
            if UnsafeRawPointer(a + i).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(b + i).loadUnaligned(as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < n {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }
}
