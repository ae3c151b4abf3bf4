/// What a stored document put into the postings (database `terms`, by
/// document id), so that replacing or deleting it removes exactly those
/// postings without tokenizing its old text again (which a new ICU version
/// might split differently).
///
/// ```
/// u8      format (1)
/// 8 × varint  words per field slot
/// varint  term count
/// per term, sorted by bytes: varint bytes shared with the previous term,
///                            varint suffix length, suffix bytes
/// ```
///
/// ```swift
/// let bytes = ForwardRecord.encode(analyzed, table: table, ranks: ranks)
/// let lengths = try ForwardRecord.decode(buffer) { term in … }
/// ```
enum ForwardRecord {
    static let format: UInt8 = 1

    /// Encodes into `w` the terms of `a` in byte order (`ranks` from the table).
    static func encode(_ a: AnalyzedDocument, table: TermTable, ranks: [Int32], into w: inout ByteWriter) {
        w.bytes.removeAll(keepingCapacity: true)
        w.byte(format)
        for l in a.fieldLengths { w.varint(UInt64(l)) }
        w.varint(a.termIds.count)
        // Byte order is rank order: sort packed (rank, id) integers.
        var packed = a.termIds.map { UInt64(UInt32(ranks[Int($0)])) << 32 | UInt64(UInt32($0)) }
        packed.sort()
        var previous: ArraySlice<UInt8> = []
        for p in packed {
            let id = Int32(truncatingIfNeeded: p & 0xFFFF_FFFF)
            let term = table.bytes(id)
            var shared = 0
            let limit = min(previous.count, term.count)
            while shared < limit && previous[previous.startIndex + shared] == term[term.startIndex + shared] { shared += 1 }
            w.varint(shared)
            w.varint(term.count - shared)
            w.bytes.append(contentsOf: term.dropFirst(shared))
            previous = term
        }
    }

    /// Calls `body` with each term; returns the field lengths.
    static func decode(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws -> [UInt32] {
        var r = ByteReader(bytes)
        guard try r.byte() == format else { throw TextIndexError.corrupt("forward record format") }
        var lengths = [UInt32](repeating: 0, count: IndexField.count)
        for i in 0..<IndexField.count { lengths[i] = UInt32(truncatingIfNeeded: try r.varint()) }
        let n = try r.int()
        var term: [UInt8] = []
        for _ in 0..<n {
            let shared = try r.int()
            let suffix = try r.int()
            guard shared <= term.count else { throw TextIndexError.corrupt("forward record prefix") }
            term.removeLast(term.count - shared)
            term.append(contentsOf: try r.bytes(suffix))
            try term.withUnsafeBufferPointer { try body($0) }
        }
        return lengths
    }
}
