import Foundation

/// Many byte strings (keys) in one buffer, each appended from parts and
/// ordered by their bytes with `memcmp`, as LMDB orders keys: a flush's
/// attribute keys without an array and a hash each.
///
/// ```swift
/// var keys = ByteStrings()
/// keys.append([0, 0, 0, 0], Array("kind\0sitem\0".utf8), [0, 0, 0, 7])
/// for i in keys.sortedOrder() { keys.withBytes(i) { print($0.count) } }   // 19
/// ```
struct ByteStrings {
    private(set) var bytes: [UInt8] = []
    private(set) var ends: [Int] = []

    var count: Int { ends.count }

    /// Appends one string made of `a`, `b` and `c`, concatenated.
    mutating func append(_ a: [UInt8], _ b: [UInt8], _ c: [UInt8]) {
        bytes.append(contentsOf: a)
        bytes.append(contentsOf: b)
        bytes.append(contentsOf: c)
        ends.append(bytes.count)
    }

    func range(_ i: Int) -> Range<Int> { (i == 0 ? 0 : ends[i - 1])..<ends[i] }

    /// Calls `body` with the bytes of string `i`.
    func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let r = range(i)
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[r])) }
    }

    /// The indices of the strings in ascending byte order.
    func sortedOrder() -> [Int] {
        var order = Array(0..<count)
        bytes.withUnsafeBufferPointer { a in
            ends.withUnsafeBufferPointer { e in
                guard let base = a.baseAddress else { return }
                order.sort { x, y in
                    let sx = x == 0 ? 0 : e[x - 1], sy = y == 0 ? 0 : e[y - 1]
                    let lx = e[x] - sx, ly = e[y] - sy
                    let c = memcmp(base + sx, base + sy, min(lx, ly))
                    return c != 0 ? c < 0 : lx < ly
                }
            }
        }
        return order
    }
}
