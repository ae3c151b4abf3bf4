import Foundation
import LMDB

/// A document checked, tokenized and folded ahead of its write transaction,
/// so that this work can run on another thread (or core) while the writer
/// commits the previous batch.
///
/// ```swift
/// // On a worker thread:
/// var tokenizer = Tokenizer()
/// let prepared = try batch.map { try PreparedDocument($0, tokenizer: &tokenizer) }
/// // In the write transaction:
/// for p in prepared { try writer.upsert(p) }
/// try writer.flush()
/// ```
///
/// Preparing is a pure function of the document: upserting a prepared
/// document writes exactly what upserting the document itself writes.
public struct PreparedDocument: Sendable {
    public let document: IndexDocument
    let identity: [UInt8]
    /// Distinct terms, concatenated, and where each ends.
    let terms: [UInt8]
    let termEnds: [Int32]
    /// Their payloads (mask, then per field tf and norm), in the same order.
    let payloads: [UInt8]
    let payloadEnds: [Int32]
    let fieldLengths: [UInt32]

    /// Checks and analyzes `document`; throws ``TextIndexError`` as an upsert would.
    public init(_ document: IndexDocument, tokenizer: inout Tokenizer) throws {
        try document.validate()
        self.document = document
        identity = TextIndex.identityKey(kind: document.kind, identifier: document.identifier)
        var scratch = tokenizer.preparation ?? PreparationScratch()
        tokenizer.preparation = nil
        defer {
            scratch.table.removeAll()
            tokenizer.preparation = scratch
        }
        let analyzed = AnalyzedDocument(document, tokenizer: &tokenizer, ranges: &scratch.ranges, table: &scratch.table,
                                        scratch: &scratch.occurrences)
        var terms: [UInt8] = []
        var termEnds: [Int32] = []
        terms.reserveCapacity(scratch.table.arena.count)
        termEnds.reserveCapacity(analyzed.termIds.count)
        for id in analyzed.termIds {
            terms.append(contentsOf: scratch.table.bytes(id))
            termEnds.append(Int32(terms.count))
        }
        self.terms = terms
        self.termEnds = termEnds
        payloads = analyzed.payloads
        payloadEnds = analyzed.payloadEnds
        fieldLengths = analyzed.fieldLengths
    }

    /// Analyzes with a tokenizer of its own.
    public init(_ document: IndexDocument) throws {
        var tokenizer = Tokenizer()
        try self.init(document, tokenizer: &tokenizer)
    }

    /// The analysis with term ids of `table` (the writer's).
    func analyzed(in table: inout TermTable) -> AnalyzedDocument {
        var ids: [Int32] = []
        ids.reserveCapacity(termEnds.count)
        terms.withUnsafeBufferPointer { all in
            var start = 0
            for end in termEnds {
                ids.append(table.intern(UnsafeBufferPointer(rebasing: all[start..<Int(end)])))
                start = Int(end)
            }
        }
        return AnalyzedDocument(termIds: ids, payloads: payloads, payloadEnds: payloadEnds, fieldLengths: fieldLengths)
    }
}
