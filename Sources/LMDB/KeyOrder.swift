import Foundation

/// LMDB's default key order (`memcmp` over the common length, then the
/// shorter first), for code that must sort or merge keys as LMDB stores
/// them: a rebuild comparing two databases key by key, an index ordering
/// byte strings.
///
/// ```swift
/// KeyOrder.compare(a, b) < 0   // a sorts before b in an LMDB database
/// ```
public enum KeyOrder {
    /// Negative, zero or positive as `a` sorts before, with or after `b`.
    @inlinable @inline(__always)
    public static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let n = min(a.count, b.count)
        let c = n == 0 ? 0 : Int(memcmp(a.baseAddress!, b.baseAddress!, n))
        return c != 0 ? c : a.count - b.count
    }
}
