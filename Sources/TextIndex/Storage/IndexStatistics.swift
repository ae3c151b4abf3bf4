import LMDB

/// The counts BM25 needs for one space, kept exact under replace and delete
/// (key `space ‖ "stats"` of database `meta`; absent: all zero).
///
/// ```
/// u8   format (1)
/// u32  next document id                      big-endian, as all below
/// u64  document count
/// 8 × (u64 total words in the field, u64 documents with the field)
/// ```
///
/// ```swift
/// let stats = try index.statistics(in: txn)
/// stats.documentCount            // 73443
/// stats.averageLength(.title)    // 1.3
/// ```
public struct IndexStatistics: Sendable, Equatable {
    /// The id the next new document gets. Ids are never reused, except that
    /// ``TextIndexWriter/removeAll()`` starts again from 0.
    public internal(set) var nextDocumentId: UInt32 = 0
    /// Documents stored.
    public internal(set) var documentCount: UInt64 = 0
    /// Words per field slot, summed over documents.
    public internal(set) var totalLengths = [UInt64](repeating: 0, count: IndexField.count)
    /// Documents with at least one word in the field slot.
    public internal(set) var documentsWithField = [UInt64](repeating: 0, count: IndexField.count)

    static let format: UInt8 = 1

    /// The mean length of the field over the documents that have it (1 when none do).
    public func averageLength(_ field: IndexField) -> Double {
        let n = documentsWithField[field.slot]
        return n == 0 ? 1 : max(1, Double(totalLengths[field.slot]) / Double(n))
    }

    /// Counts a document in. Stored counts that would overflow are a
    /// corrupt index (an error), never a trap.
    mutating func add(_ lengths: [UInt32]) throws {
        documentCount = try Self.checked(documentCount.addingReportingOverflow(1))
        for i in 0..<IndexField.count where lengths[i] > 0 {
            totalLengths[i] = try Self.checked(totalLengths[i].addingReportingOverflow(UInt64(lengths[i])))
            documentsWithField[i] = try Self.checked(documentsWithField[i].addingReportingOverflow(1))
        }
    }

    /// Counts a stored document out. Counts smaller than the document's
    /// are a corrupt index (views damaged, or loaded from a bad snapshot):
    /// an error, never a trap.
    mutating func subtract(_ lengths: [UInt32]) throws {
        documentCount = try Self.checked(documentCount.subtractingReportingOverflow(1))
        for i in 0..<IndexField.count where lengths[i] > 0 {
            totalLengths[i] = try Self.checked(totalLengths[i].subtractingReportingOverflow(UInt64(lengths[i])))
            documentsWithField[i] = try Self.checked(documentsWithField[i].subtractingReportingOverflow(1))
        }
    }

    private static func checked(_ result: (partialValue: UInt64, overflow: Bool)) throws -> UInt64 {
        guard !result.overflow else {
            throw TextIndexError.corrupt("statistics do not match the stored documents; rebuild the index")
        }
        return result.partialValue
    }

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 13 + 16 * IndexField.count)
        w.byte(IndexStatistics.format)
        w.bigEndian(nextDocumentId)
        w.bigEndian(documentCount)
        for i in 0..<IndexField.count {
            w.bigEndian(totalLengths[i])
            w.bigEndian(documentsWithField[i])
        }
        return w.bytes
    }

    init() {}

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = ByteReader(bytes)
        try TextIndexError.reading("statistics") {
            guard try r.byte() == IndexStatistics.format else { throw TextIndexError.corrupt("statistics format") }
            nextDocumentId = try r.bigEndian(UInt32.self)
            documentCount = try r.bigEndian(UInt64.self)
            for i in 0..<IndexField.count {
                totalLengths[i] = try r.bigEndian(UInt64.self)
                documentsWithField[i] = try r.bigEndian(UInt64.self)
            }
        }
    }
}
