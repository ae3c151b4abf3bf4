/// The value of one postings key (block, term): the documents of that block
/// that contain the term, by offset in the block, each with its payload.
///
/// ```
/// varint  count of documents
/// then per document, by increasing offset:
///   varint  offset − previous offset (the first: the offset itself)
///   u8      field mask (bit i: the term occurs in field slot i)
///   per set bit, low to high:  varint term frequency, u8 field length norm
/// ```
///
/// A flush merges its changes into the stored value once per key.
///
/// ```swift
/// let merged = PostingList.merge(existing, changes: [(offset: 7, payload: [0b1, 1, 3])])
/// ```
enum PostingList {
    /// The number of documents in a stored value.
    static func count(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        var r = ByteReader(bytes)
        return try r.int()
    }

    /// The length of the payload starting at `offset` in `bytes`.
    @inline(__always)
    static func payloadLength(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws -> Int {
        var r = ByteReader(bytes, offset: offset)
        let mask = try r.byte()
        for _ in 0..<mask.nonzeroBitCount {
            _ = try r.varint()
            _ = try r.byte()
        }
        return r.offset - offset
    }

    /// Merges `changes` (sorted by offset; a later change of the same offset
    /// wins; `nil` removes) into `existing` (nil when the key is absent).
    /// Returns the new value, or nil when no document is left.
    static func merge(_ existing: UnsafeRawBufferPointer?, changes: ArraySlice<PostingChange>) throws -> [UInt8]? {
        var out = ByteWriter(capacity: (existing?.count ?? 0) + changes.count * 6 + 4)
        var count = 0
        var body = ByteWriter(capacity: (existing?.count ?? 0) + changes.count * 6)
        var previous = 0
        var first = true
        func emit(_ offset: Int, _ payload: UnsafeRawBufferPointer) {
            body.varint(first ? offset : offset - previous)
            body.bytes.append(contentsOf: payload)
            previous = offset
            first = false
            count += 1
        }
        var r = existing.map { ByteReader($0) }
        var remaining = try r?.int() ?? 0
        var existingOffset = -1
        var existingPayload = UnsafeRawBufferPointer(start: nil, count: 0)
        func advance() throws {
            guard remaining > 0, var reader = r else { existingOffset = Int.max; return }
            let delta = try reader.int()
            existingOffset = existingOffset < 0 ? delta : existingOffset + delta
            let n = try payloadLength(reader.base, at: reader.offset)
            existingPayload = try reader.bytes(n)
            r = reader
            remaining -= 1
        }
        try advance()
        var i = changes.startIndex
        while i < changes.endIndex {
            // The last change for this offset wins.
            var j = i
            while j + 1 < changes.endIndex && changes[j + 1].offset == changes[i].offset { j += 1 }
            let change = changes[j]
            let offset = Int(change.offset)
            while existingOffset < offset {
                emit(existingOffset, existingPayload)
                try advance()
            }
            if existingOffset == offset { try advance() }
            if let payload = change.payload {
                payload.withUnsafeBytes { emit(offset, $0) }
            }
            i = j + 1
        }
        while existingOffset != Int.max {
            emit(existingOffset, existingPayload)
            try advance()
        }
        guard count > 0 else { return nil }
        out.varint(count)
        out.bytes.append(contentsOf: body.bytes)
        return out.bytes
    }
}

/// One document's change to a postings key: its offset in the block and
/// its new payload, or nil to remove it.
struct PostingChange {
    var offset: UInt16
    var payload: [UInt8]?
}
