import LMDB

/// Where postings are read from: sealed blocks in `postings`, the open
/// block's runs in `runs` (see ``RunDirectory``).
extension TextIndex {
    /// `space ‖ block ‖ start`: the key of every posting of one run, before the term.
    func runPrefix(block: UInt32, start: UInt16) -> [UInt8] {
        PostingSource(space: spaceId, block: block, runStart: start).key().encoded
    }

    /// The space's run directory, or nil when the open block has no runs.
    func runDirectory(in txn: ReadTransaction) throws -> RunDirectory? {
        try meta.withValue(forKey: metaKey(TextIndex.runsKey), in: txn) { try RunDirectory(decoding: $0) }
    }

    /// One place to read a term's postings from: the value of a tier of
    /// sealed blocks (``PostingTier``), of a sealed block of the newest tier
    /// while it is incomplete, or of one run of the open block. Its key
    /// prefix (before the term) is `space ‖ tier` in `postings`, `space ‖
    /// block` in `blocks`, `space ‖ block ‖ start` in
    /// `runs`; written into a caller's buffer, so that a query allocates no
    /// key a source.
    struct PostingSource {
        var space: UInt32
        /// The tier, the sealed block, or the open block (a run).
        var block: UInt32
        /// The run's first offset in the open block; nil for a sealed block.
        var runStart: UInt16?
        /// A tier of 4 sealed blocks (in `postings`).
        var isTier = false

        var isRun: Bool { runStart != nil }
        /// Bytes of the key before the term.
        var prefixCount: Int { runStart == nil ? 8 : 10 }

        /// The key before the term (``SpaceKey``), then `term`.
        @inline(__always)
        func key(then term: some Collection<UInt8> = EmptyCollection()) -> SpaceKey {
            var key = SpaceKey(space: space, capacity: prefixCount - SpaceKey.spaceByteCount + max(term.count, 16))
            key.append(bigEndian: block)
            if let start = runStart { key.append(bigEndian: start) }
            key.append(term)
            return key
        }

        /// Writes this source's block (and run start) over those of `key`,
        /// the key of a source of the space with as many parts: the next
        /// source's key for the same term, without building it again.
        @inline(__always)
        func replaceParts(of key: inout SpaceKey) {
            key.replace(bigEndian: block, at: SpaceKey.spaceByteCount)
            if let start = runStart { key.replace(bigEndian: start, at: SpaceKey.spaceByteCount + 4) }
        }

        /// The key before the term.
        var prefix: [UInt8] { key().encoded }
    }

    /// Every source of the space's postings for `stats`, in block order:
    /// each complete tier of the blocks whose ids are all allocated, each
    /// sealed block after them, then each run of the open block. `reads`
    /// counts the directory's lookup.
    func postingSources(_ stats: IndexStatistics, reads: inout Int, in txn: ReadTransaction) throws -> [PostingSource] {
        let next = stats.nextDocumentId
        let sealed = next >> TextIndex.blockShift
        let tiers = sealed >> PostingTier.shift
        var sources: [PostingSource] = []
        sources.reserveCapacity(Int(tiers) + 3 + 8)
        for tier in 0..<tiers {
            sources.append(PostingSource(space: spaceId, block: tier, runStart: nil, isTier: true))
        }
        for block in (tiers << PostingTier.shift)..<sealed {
            sources.append(PostingSource(space: spaceId, block: block, runStart: nil))
        }
        guard next & UInt32(TextIndex.blockSize - 1) != 0 else { return sources }
        reads += 1
        guard let directory = try runDirectory(in: txn) else { return sources }
        guard directory.block == sealed else { throw TextIndexError.corrupt("run directory of block \(directory.block), open block \(sealed)") }
        for run in directory.runs {
            sources.append(PostingSource(space: spaceId, block: sealed, runStart: run.start))
        }
        return sources
    }

    /// The database a source is read from.
    func database(of source: PostingSource) -> Database<[UInt8], [UInt8]> {
        source.isRun ? runs : source.isTier ? postings : blocks
    }
}
