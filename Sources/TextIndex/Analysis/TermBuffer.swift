/// A term decoded from a front-coded ``RunPage``: the bytes of the current
/// entry's term, kept between entries (the next one shares a prefix of
/// them). Allocated once (terms are at most ``capacity`` bytes) and reused;
/// what ``bytes`` points to changes with the next entry decoded into it.
///
/// ```swift
/// let term = TermBuffer()
/// var at = RunPage.Position()
/// let value = try page.entry(at: &at, term: term)   // term.bytes: the entry's whole term
/// ```
final class TermBuffer {
    static let capacity = 256
    let storage = UnsafeMutableRawPointer.allocate(byteCount: TermBuffer.capacity, alignment: 8)
    var count = 0

    deinit { storage.deallocate() }

    /// The term (valid until the buffer is written again).
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: count) }

    /// Keeps the first `shared` bytes and appends `suffix` (the caller
    /// checked that `shared` is at most ``count`` and the sum at most ``capacity``).
    @inline(__always)
    func set(_ shared: Int, _ suffix: UnsafeRawBufferPointer) {
        if !suffix.isEmpty { (storage + shared).copyMemory(from: suffix.baseAddress!, byteCount: suffix.count) }
        count = shared + suffix.count
    }
}
