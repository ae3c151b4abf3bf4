import LMDB

/// How a ``DocumentPage`` lies in database `docs`: its bytes cut into
/// chunks of 4,080 bytes, each the value of one key, so that every chunk
/// but the last fills one LMDB overflow page exactly (4,096 bytes less the
/// page's 16-byte header). A page of 128 records of 33 bytes (4.3 KB) was
/// two overflow pages, half empty, as one value.
///
/// ```
/// chunk 0   u32 space ‖ u32 page                 → bytes 0 ..< 4,080 (the header and offsets are here)
/// chunk i   u32 space ‖ u32 page ‖ u16 i         → bytes 4,080·i ..< 4,080·(i + 1)
/// ```
///
/// ```swift
/// try DocumentChunks.write(page.encoded(), space: 1, page: 0, in: index.docs, txn)
/// let arena = DocumentChunks.Arena()
/// let record = try DocumentChunks.record(5, space: 1, cursor: try index.docs.cursor(in: txn), arena: arena)
/// ```
enum DocumentChunks {
    static let size = 4080

    /// Owns the bytes of records that were cut between two chunks, copied
    /// out whole: valid until it is released (the records in one chunk
    /// are read in place, valid as long as the transaction).
    final class Arena {
        private var buffers: [UnsafeMutableRawBufferPointer] = []

        init() {}

        func copy(_ count: Int) -> UnsafeMutableRawBufferPointer {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 8)
            buffers.append(buffer)
            return buffer
        }

        deinit { for b in buffers { b.deallocate() } }
    }

    static func key(space: UInt32, page: UInt32, chunk: Int) -> [UInt8] {
        var key = SpaceKey(space: space, capacity: 6)
        key.append(bigEndian: page)
        if chunk > 0 { key.append(bigEndian: UInt16(chunk)) }
        return key.encoded
    }

    /// The record of the space's document `id`, read through `cursor`; nil when none.
    static func record(_ id: UInt32, space: UInt32, cursor: Cursor<[UInt8], [UInt8]>, arena: Arena) throws -> UnsafeRawBufferPointer? {
        let page = DocumentPage.page(of: id)
        guard let first = try key(space: space, page: page, chunk: 0).withUnsafeBytes({ try cursor.seekBytes(exactly: $0) }),
              let range = try DocumentPage.range(DocumentPage.slot(of: id), first: first.value) else { return nil }
        if range.upperBound <= first.value.count { return UnsafeRawBufferPointer(rebasing: first.value[range]) }
        // Cut between chunks: copied out from the chunks that hold it.
        guard first.value.count == size else { throw TextIndexError.corrupt("document page \(page): chunk 0 of \(first.value.count) bytes") }
        let out = arena.copy(range.count)
        var chunk = range.lowerBound / size
        var entry: Cursor<[UInt8], [UInt8]>.RawEntry? = chunk == 0 ? first
            : try key(space: space, page: page, chunk: chunk).withUnsafeBytes { try cursor.seekBytes(exactly: $0) }
        while true {
            guard let e = entry, e.key.elementsEqual(key(space: space, page: page, chunk: chunk)) else {
                throw TextIndexError.corrupt("document page \(page): chunk \(chunk) missing")
            }
            let chunkStart = chunk * size
            let lo = max(range.lowerBound, chunkStart), hi = min(range.upperBound, chunkStart + e.value.count)
            guard lo < hi else { throw TextIndexError.corrupt("document page \(page): chunk \(chunk) of \(e.value.count) bytes") }
            UnsafeMutableRawBufferPointer(rebasing: out[(lo - range.lowerBound)..<(hi - range.lowerBound)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: e.value[(lo - chunkStart)..<(hi - chunkStart)]))
            if hi == range.upperBound { return UnsafeRawBufferPointer(out) }
            guard e.value.count == size else { throw TextIndexError.corrupt("document page \(page): chunk \(chunk) of \(e.value.count) bytes") }
            chunk += 1
            entry = try cursor.nextBytes()
        }
    }

    /// The whole stored page, its chunks joined; nil when none.
    static func read(space: UInt32, page: UInt32, cursor: Cursor<[UInt8], [UInt8]>) throws -> [UInt8]? {
        guard let first = try key(space: space, page: page, chunk: 0).withUnsafeBytes({ try cursor.seekBytes(exactly: $0) }) else { return nil }
        return try joined(first: first.value, space: space, page: page, cursor: cursor).bytes
    }

    /// Every stored page of the space in page order, its chunks joined and
    /// checked as ``read(space:page:cursor:)`` checks them.
    static func forEachPage(space: UInt32, cursor: Cursor<[UInt8], [UInt8]>, _ body: (UInt32, [UInt8]) throws -> Void) throws {
        let prefix = SpaceKey.prefix(of: space)
        var entry = try prefix.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.starts(with: prefix) {
            // A page starts at its chunk 0 (8-byte key); a chunk key here has lost its page's start.
            guard e.key.count == 8 else { throw TextIndexError.corrupt("document chunk key \(Array(e.key)) without its page's chunk 0") }
            let page = BigEndian.load(UInt32.self, from: e.key, at: SpaceKey.spaceByteCount)
            let (bytes, next) = try joined(first: e.value, space: space, page: page, cursor: cursor)
            try body(page, bytes)
            entry = next
        }
    }

    /// Chunk 0's bytes and the chunks after it (the cursor stands on chunk
    /// 0), each checked to follow the last whole; and the entry after them.
    private static func joined(first: UnsafeRawBufferPointer, space: UInt32, page: UInt32, cursor: Cursor<[UInt8], [UInt8]>) throws -> (bytes: [UInt8], next: Cursor<[UInt8], [UInt8]>.RawEntry?) {
        let prefix = key(space: space, page: page, chunk: 0)
        var bytes = [UInt8](first)
        var entry = try cursor.nextBytes()
        while let e = entry, e.key.count == 10, e.key.starts(with: prefix) {
            guard bytes.count % size == 0, e.key.elementsEqual(key(space: space, page: page, chunk: bytes.count / size)) else {
                throw TextIndexError.corrupt("document page \(page): chunk after \(bytes.count) bytes")
            }
            bytes.append(contentsOf: e.value)
            entry = try cursor.nextBytes()
        }
        return (bytes, entry)
    }

    /// Stores `bytes` (empty: removes the page) over what the page held.
    static func write(_ bytes: [UInt8], space: UInt32, page: UInt32, in db: Database<[UInt8], [UInt8]>, _ txn: WriteTransaction) throws {
        let chunks = (bytes.count + size - 1) / size
        guard chunks <= Int(UInt16.max) else { throw TextIndexError.corrupt("document page \(page) of \(bytes.count) bytes") }
        try bytes.withUnsafeBytes { all in
            for c in 0..<chunks {
                let part = UnsafeRawBufferPointer(rebasing: all[(c * size)..<min(all.count, (c + 1) * size)])
                try key(space: space, page: page, chunk: c).withUnsafeBytes { try db.putBytes(part, forKey: $0, in: txn) }
            }
        }
        // Chunks past the new end go (and chunk 0 with an empty page).
        let prefix = key(space: space, page: page, chunk: 0)
        let cursor = try db.cursor(in: txn)
        var entry = try key(space: space, page: page, chunk: chunks).withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.starts(with: prefix) {
            try cursor.deleteCurrent()
            entry = try cursor.nextBytes()
        }
    }
}
