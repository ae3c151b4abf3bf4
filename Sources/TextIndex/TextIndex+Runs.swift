import LMDB

/// Where postings are read from: sealed blocks in `postings`, the open
/// block's runs in `runs` (see ``RunDirectory``).
extension TextIndex {
    /// `space ‖ block ‖ start`: the key of every posting of one run, before the term.
    func runPrefix(block: UInt32, start: UInt16) -> [UInt8] {
        var key = [UInt8]()
        key.reserveCapacity(10 + 16)
        withUnsafeBytes(of: spaceId.bigEndian) { key.append(contentsOf: $0) }
        withUnsafeBytes(of: block.bigEndian) { key.append(contentsOf: $0) }
        key.append(UInt8(start >> 8))
        key.append(UInt8(start & 0xFF))
        return key
    }

    /// The space's run directory, or nil when the open block has no runs.
    func runDirectory(in txn: ReadTransaction) throws -> RunDirectory? {
        try meta.withValue(forKey: metaKey(TextIndex.runsKey), in: txn) { try RunDirectory(decoding: $0) }
    }

    /// One run of the open block, a place to read a term's postings from
    /// (sealed blocks are read from `postings`, one range a term). Its key
    /// prefix (before the term) is `space ‖ block ‖ start` in `runs`;
    /// written into a caller's buffer, so that a query allocates no key a
    /// run.
    struct PostingSource {
        var space: UInt32
        var block: UInt32
        /// The run's first offset in the open block.
        var start: UInt16

        /// Bytes of the key before the term.
        static let prefixCount = 10

        /// Appends the key before the term to `key`.
        @inline(__always)
        func appendPrefix(to key: inout [UInt8]) {
            withUnsafeBytes(of: space.bigEndian) { key.append(contentsOf: $0) }
            withUnsafeBytes(of: block.bigEndian) { key.append(contentsOf: $0) }
            key.append(UInt8(start >> 8))
            key.append(UInt8(start & 0xFF))
        }

        /// The key before the term.
        var prefix: [UInt8] {
            var key = [UInt8]()
            key.reserveCapacity(PostingSource.prefixCount + 16)
            appendPrefix(to: &key)
            return key
        }
    }

    /// Where the space's postings for `stats` are: sealed blocks
    /// `0 ..< sealedBlocks` (in `postings`, keys `space ‖ term ‖ block`),
    /// then each run of the open block. `reads` counts the directory's
    /// lookup.
    func postingSources(_ stats: IndexStatistics, reads: inout Int, in txn: ReadTransaction) throws
        -> (sealedBlocks: UInt32, runs: [PostingSource]) {
        let next = stats.nextDocumentId
        let sealed = next >> TextIndex.blockShift
        guard next & UInt32(TextIndex.blockSize - 1) != 0 else { return (sealed, []) }
        reads += 1
        guard let directory = try runDirectory(in: txn) else { return (sealed, []) }
        guard directory.block == sealed else { throw TextIndexError.corrupt("run directory of block \(directory.block), open block \(sealed)") }
        return (sealed, directory.runs.map { PostingSource(space: spaceId, block: sealed, start: $0.start) })
    }
}
