/// Blocks of compressed payloads (``CompressedPayload``) decompressed in
/// one transaction, kept for its life (``LMDB/ReadTransaction/kept(_:)``):
/// readers of a few bytes of a payload at a time (the item store's items,
/// a query's candidates, each an item of a batch) read neighbours of the
/// bytes they read before, and decompress each block once instead of once
/// a read.
///
/// A block is found by its record's position, its index and block size,
/// and the record's payload digest: the payload as appended has that
/// SHA-256, so the block's bytes are the same whatever the record's stored
/// form (a record that `compact` rewrote in the same write transaction) and
/// never another record's. A redacted record is never read from here (the
/// reader sees the flag in the record first).
///
/// At most ``capacity`` blocks and ``byteCapacity`` bytes; the block used
/// longest ago goes first.
///
/// ```swift
/// let cache = txn.kept { PayloadBlockCache() }
/// if let block = cache.block(at: position, index: 3, shift: 13, digest: digest) { … }
/// cache.keep(bytes, at: position, index: 3, shift: 13, digest: digest)
/// ```
final class PayloadBlockCache {
    static let capacity = 32
    static let byteCapacity = 512 * 1024

    struct Key: Equatable {
        var position: Position
        var index: Int
        var shift: UInt8
        var digest: PayloadDigest
    }

    private var keys: [Key] = []
    private var blocks: [[UInt8]] = []
    private var lastUse: [UInt64] = []
    private var clock: UInt64 = 0
    private var bytes = 0

    /// The decompressed block `key` names, if kept.
    func block(_ key: Key) -> [UInt8]? {
        // Newest first: a reader mostly asks again for the block it read last.
        var i = keys.count - 1
        while i >= 0 {
            if keys[i] == key {
                clock += 1
                lastUse[i] = clock
                return blocks[i]
            }
            i -= 1
        }
        return nil
    }

    /// Keeps `block` under `key`, letting go of the blocks used longest ago
    /// to stay within the bounds (a block past ``byteCapacity`` alone is not kept).
    func keep(_ block: [UInt8], _ key: Key) {
        guard block.count <= Self.byteCapacity else { return }
        while !keys.isEmpty && (keys.count >= Self.capacity || bytes + block.count > Self.byteCapacity) {
            let oldest = lastUse.indices.min { lastUse[$0] < lastUse[$1] }!
            bytes -= blocks[oldest].count
            keys.remove(at: oldest)
            blocks.remove(at: oldest)
            lastUse.remove(at: oldest)
        }
        clock += 1
        keys.append(key)
        blocks.append(block)
        lastUse.append(clock)
        bytes += block.count
    }
}

/// A record's 32-byte payload digest, held inline.
struct PayloadDigest: Equatable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    init(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 32)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
    }

    static func == (lhs: PayloadDigest, rhs: PayloadDigest) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }
}
