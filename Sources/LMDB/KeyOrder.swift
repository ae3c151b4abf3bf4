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

    /// Whether `a` sorts before `b` by their UTF-8 bytes, as LMDB orders
    /// keys (not by Swift's Unicode order): the one string order of the
    /// store, independent of locale. Native strings are compared in place
    /// with `memcmp` (the generic `utf8.lexicographicallyPrecedes`, byte by
    /// byte, cost about 1 % of indexing, sorting each batch's identifiers;
    /// `withUTF8` on copies retained and released both strings at every
    /// comparison).
    @inlinable @inline(__always)
    public static func precedes(_ a: String, _ b: String) -> Bool {
        if let less = a.utf8.withContiguousStorageIfAvailable({ x in
            b.utf8.withContiguousStorageIfAvailable { y -> Bool in
                compare(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) < 0
            }
        }), let less { return less }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}
