import LMDB

/// The value of one postings key (block, term): the documents of that block
/// that contain the term, by offset in the block, each with its payload.
///
/// ```
/// varint  count of documents
/// u16     when the count is 2 or more: the offset of the last document
///         (big-endian), so that a flush can append and a merge join
///         values without decoding them (of one document, the offset that
///         follows is the last)
/// then per document, by increasing offset:
///   varint  offset − previous offset (the first: the offset itself)
///   u8      field mask (bit i: the term occurs in field slot i)
///   per set bit, low to high:  varint term frequency, u8 field length norm
/// ```
///
/// A flush merges all its changes to a key into the stored value at once.
///
/// ```swift
/// var out: [UInt8] = []
/// let nonEmpty = try PostingList.merge(existing, changes, payloads: arena, into: &out)
/// ```
enum PostingList {
    /// The number of documents in a stored value.
    static func count(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        var r = ByteReader(bytes)
        do throws(ByteError) { return try r.int() } catch { throw corrupt(error) }
    }

    /// A value whose bytes do not read (``ByteError``): a corrupt index.
    static func corrupt(_ error: ByteError) -> TextIndexError { .corrupt("postings value: \(error)") }

    /// Count, last offset, and where the entries start.
    static func header(_ bytes: UnsafeRawBufferPointer) throws -> (count: Int, last: Int, body: Int) {
        var r = ByteReader(bytes)
        do throws(ByteError) {
            let count = try r.int()
            guard count != 1 else {
                // One document: no stored last offset; it is the first one's.
                let body = r.offset
                return (count, try r.int(), body)
            }
            let last = try r.bigEndian(UInt16.self)
            return (count, Int(last), r.offset)
        } catch {
            throw corrupt(error)
        }
    }

    /// Appends the header of a value of `count` documents (1 or more) whose last is at offset `last`.
    @inline(__always)
    static func appendHeader(count: Int, last: Int, to out: inout [UInt8]) {
        Varint.append(count, to: &out)
        guard count > 1 else { return }
        BigEndian.append(UInt16(last), to: &out)
    }

    /// The length of the payload starting at `offset` in `bytes`.
    @inline(__always)
    static func payloadLength(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws -> Int {
        var r = ByteReader(bytes, offset: offset)
        do throws(ByteError) {
            let mask = try r.byte()
            for _ in 0..<mask.nonzeroBitCount {
                _ = try r.varint()
                _ = try r.byte()
            }
        } catch {
            throw corrupt(error)
        }
        return r.offset - offset
    }

    /// The values of one term in consecutive runs (`values`, by increasing
    /// offsets: every document of one comes before every document of the
    /// next) as one value, into `out` (left empty when they hold no
    /// document). Only each value's first offset is re-encoded (as a delta
    /// from the previous value's last); the rest is copied as it is.
    static func concatenate(_ values: [ArraySlice<UInt8>], into out: inout [UInt8]) throws {
        out.removeAll(keepingCapacity: true)
        var count = 0
        var newLast = -1
        for v in values {
            let h = try v.withUnsafeBytes { try header($0) }
            guard h.count > 0 else { continue }
            count += h.count
            newLast = h.last
        }
        guard count > 0 else { return }
        appendHeader(count: count, last: newLast, to: &out)
        var last = -1
        for v in values {
            try v.withUnsafeBytes { raw in
                let h = try header(raw)
                guard h.count > 0 else { return }
                var r = ByteReader(raw, offset: h.body)
                let first: Int
                do throws(ByteError) { first = try r.int() } catch { throw corrupt(error) }
                guard first > last, first < TextIndex.blockSize else { throw TextIndexError.corrupt("run order") }
                Varint.append(last < 0 ? first : first - last, to: &out)
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[r.offset...]))
                last = h.last
            }
        }
    }

    /// Appends to `out` the value of a key that holds only `changes` (new
    /// documents, sorted by offset, each set once): what
    /// ``merge(_:_:payloads:into:)`` writes for an absent key, without its
    /// general merge.
    static func append(_ changes: ArraySlice<PostingChange>, payloads: [UInt8], to out: inout [UInt8]) {
        guard let lastChange = changes.last else { return }
        if changes.count == 1 {
            // One document (most of a small space's values): its offset, its payload.
            out.append(1)
            Varint.append(Int(lastChange.offset), to: &out)
            out.append(contentsOf: payloads[Int(lastChange.payloadStart)..<Int(lastChange.payloadEnd)])
            return
        }
        // Sized first, then written through a pointer: a value is written
        // for every term of every new document, a few bytes a posting.
        // At most: a 5-byte count, 2 bytes of last offset, and per document
        // a 2-byte delta (offsets < 4,096) and its payload.
        let base = out.count
        var size = 7
        for c in changes { size += 2 + Int(c.payloadEnd - c.payloadStart) }
        out.append(contentsOf: repeatElement(0, count: size))
        let written = out.withUnsafeMutableBytes { o -> Int in
            payloads.withUnsafeBufferPointer { p -> Int in
                var w = base
                Varint.write(changes.count, into: o, at: &w)
                BigEndian.store(UInt16(lastChange.offset), into: o, at: w)
                w += 2
                var previous = -1
                for c in changes {
                    let offset = Int(c.offset)
                    Varint.write(previous < 0 ? offset : offset - previous, into: o, at: &w)
                    // Payloads are a few bytes: copied by hand, not by `memcpy`.
                    for k in Int(c.payloadStart)..<Int(c.payloadEnd) {
                        o[w] = p[k]
                        w += 1
                    }
                    previous = offset
                }
                return w
            }
        }
        out.removeLast(out.count - written)
    }

    /// Merges `changes` (sorted by offset; for one offset a removal comes
    /// before a set, and the last one wins) into `existing` (nil when the
    /// key is absent), writing the new value into `out`. Returns false when
    /// no document is left (the key is to be deleted).
    static func merge(_ existing: UnsafeRawBufferPointer?, _ changes: ArraySlice<PostingChange>,
                      payloads: [UInt8], into out: inout [UInt8]) throws -> Bool {
        out.removeAll(keepingCapacity: true)
        var body: [UInt8] = []
        var count = 0
        var last = -1
        let head = try existing.map { try header($0) }

        // Fast path: only new documents after the last one (a growing block).
        if let head, let first = changes.first, Int(first.offset) > head.last,
           changes.allSatisfy({ $0.isSet }) {
            let existing = existing!
            count = head.count
            last = head.last
            appendHeader(count: count + changes.count, last: Int(changes.last!.offset), to: &out)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: existing[head.body...]))
            for c in changes {
                Varint.append(Int(c.offset) - last, to: &out)
                out.append(contentsOf: payloads[Int(c.payloadStart)..<Int(c.payloadEnd)])
                last = Int(c.offset)
            }
            return true
        }

        body.reserveCapacity((existing?.count ?? 0) + changes.count * 6)
        func emit(_ offset: Int, _ payload: some Collection<UInt8>) {
            Varint.append(last < 0 ? offset : offset - last, to: &body)
            body.append(contentsOf: payload)
            last = offset
            count += 1
        }
        var reader = existing.map { ByteReader($0, offset: head!.body) }
        var remaining = head?.count ?? 0
        var existingOffset = -1
        var existingPayload = UnsafeRawBufferPointer(start: nil, count: 0)
        func advance() throws {
            guard remaining > 0, var r = reader else { existingOffset = Int.max; return }
            do {
                let delta = try r.int()
                existingOffset = existingOffset < 0 ? delta : existingOffset + delta
                existingPayload = try r.bytes(try payloadLength(r.base, at: r.offset))
            } catch let error as ByteError {
                throw corrupt(error)
            }
            reader = r
            remaining -= 1
        }
        try advance()
        var i = changes.startIndex
        while i < changes.endIndex {
            var j = i
            while j + 1 < changes.endIndex && changes[j + 1].offset == changes[i].offset { j += 1 }
            let change = changes[j]
            let offset = Int(change.offset)
            while existingOffset < offset {
                emit(existingOffset, existingPayload)
                try advance()
            }
            if existingOffset == offset { try advance() }
            if change.isSet { emit(offset, payloads[Int(change.payloadStart)..<Int(change.payloadEnd)]) }
            i = j + 1
        }
        while existingOffset != Int.max {
            emit(existingOffset, existingPayload)
            try advance()
        }
        guard count > 0 else { return false }
        appendHeader(count: count, last: last, to: &out)
        out.append(contentsOf: body)
        return true
    }
}
