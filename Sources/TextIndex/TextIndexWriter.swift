import Foundation
import LMDB

/// Changes to a ``TextIndex`` within one write transaction.
///
/// Upserts and removals are accumulated in memory; ``flush()`` writes them
/// with each postings key read and written once, however many documents of
/// the batch share it (rewriting a term's postings per document is the trap
/// SQLite's FTS2 fell into). Call it once before the transaction commits;
/// more calls are fine. A writer flushes by itself every 4,096 pending
/// documents to bound its memory; that changes no stored byte.
///
/// ```swift
/// try env.write { txn in
///     let writer = index.writer(in: txn)
///     for doc in batch { try writer.upsert(doc) }
///     try writer.remove(kind: "item", identifier: "order-7")
///     try writer.flush()
/// }
/// ```
///
/// Not thread-safe, like the transaction it is bound to.
public final class TextIndexWriter {
    let index: TextIndex
    let txn: WriteTransaction
    var tokenizer = Tokenizer()
    var ranges: [Range<Int>] = []
    var stats: IndexStatistics?
    /// Identity key → document id, for identities touched in this transaction.
    var identities: [[UInt8]: UInt32] = [:]
    var pending: [UInt32: Pending] = [:]

    static let autoFlushCount = 4096

    enum Pending {
        case upsert(IndexDocument, identity: [UInt8], AnalyzedDocument)
        case remove(identity: [UInt8])
    }

    init(index: TextIndex, transaction: WriteTransaction) {
        self.index = index
        self.txn = transaction
    }

    /// Adds `doc`, or replaces the document of the same kind and identifier
    /// (all its postings and attributes go, the new ones come).
    public func upsert(_ doc: IndexDocument) throws {
        try doc.validate()
        let identity = TextIndex.identityKey(kind: doc.kind, identifier: doc.identifier)
        let id = try documentId(identity, allocate: true)!
        let analyzed = AnalyzedDocument(doc, tokenizer: &tokenizer, ranges: &ranges)
        pending[id] = .upsert(doc, identity: identity, analyzed)
        if pending.count >= TextIndexWriter.autoFlushCount { try flush() }
    }

    /// Removes the document of `kind` and `identifier`; false when there is none.
    @discardableResult
    public func remove(kind: String, identifier: String) throws -> Bool {
        let identity = TextIndex.identityKey(kind: kind, identifier: identifier)
        guard let id = try documentId(identity, allocate: false) else { return false }
        switch pending[id] {
        case .remove: return false
        case .upsert: break
        case nil:
            // Known only from the ids database: it exists.
            break
        }
        pending[id] = .remove(identity: identity)
        return true
    }

    /// Removes every document and resets the statistics (ids start again at 0).
    public func removeAll() throws {
        pending.removeAll()
        identities.removeAll()
        try index.ids.removeAll(in: txn)
        try index.docs.removeAll(in: txn)
        try index.terms.removeAll(in: txn)
        try index.postings.removeAll(in: txn)
        try index.values.removeAll(in: txn)
        stats = IndexStatistics()
        try index.meta.put(stats!.encoded(), forKey: "stats", in: txn)
        try index.meta.delete("fields", in: txn)
    }

    /// The id of `identity`: touched earlier in this transaction, stored, or
    /// (when `allocate`) a new one.
    func documentId(_ identity: [UInt8], allocate: Bool) throws -> UInt32? {
        if let id = identities[identity] { return id }
        if let id = try index.documentId(identity, in: txn) {
            identities[identity] = id
            return id
        }
        guard allocate else { return nil }
        if stats == nil { stats = try index.statistics(in: txn) }
        let id = stats!.nextDocumentId
        guard id < UInt32.max else { throw TextIndexError.corrupt("document ids exhausted; rebuild the index") }
        stats!.nextDocumentId += 1
        identities[identity] = id
        return id
    }

    /// Writes what was accumulated: each postings key once, sorted.
    public func flush() throws {
        guard !pending.isEmpty else { return }
        if stats == nil { stats = try index.statistics(in: txn) }
        var changes: [TermKey: [PostingChange]] = [:]
        changes.reserveCapacity(pending.count * 16)
        var removedValues = Set<[UInt8]>()
        var addedValues = Set<[UInt8]>()
        var fieldNames = Set<String>()

        for id in pending.keys.sorted() {
            let block = id >> TextIndex.blockShift
            let offset = UInt16(id & UInt32(TextIndex.blockSize - 1))
            let idKey = UInt32Key(id)
            var idBytes = [UInt8]()
            withUnsafeBytes(of: id.bigEndian) { idBytes.append(contentsOf: $0) }
            // What the stored version put in: remove it.
            if let oldLengths = try index.terms.withValue(forKey: idKey, in: txn, { bytes in
                try ForwardRecord.decode(bytes) { term in
                    changes[TermKey(block: block, term: term), default: []]
                        .append(PostingChange(offset: offset, payload: nil))
                }
            }) {
                stats!.subtract(oldLengths)
                if let old = try index.docs.withValue(forKey: idKey, in: txn, { try DocumentRecord.decode($0) }) {
                    for k in AttributeKey.keys(of: old) { removedValues.insert(k + idBytes) }
                }
            }
            switch pending[id]! {
            case .upsert(let doc, let identity, let analyzed):
                for (term, payload) in zip(analyzed.terms, analyzed.payloads) {
                    changes[TermKey(block: block, term: term), default: []]
                        .append(PostingChange(offset: offset, payload: payload))
                }
                stats!.add(analyzed.fieldLengths)
                fieldNames.formUnion(doc.fields.keys)
                for k in AttributeKey.keys(of: doc) { addedValues.insert(k + idBytes) }
                try index.docs.put(DocumentRecord.encode(doc), forKey: idKey, in: txn)
                try index.terms.put(ForwardRecord.encode(analyzed), forKey: idKey, in: txn)
                try index.ids.put(idBytes, forKey: identity, in: txn)
            case .remove(let identity):
                try index.docs.delete(idKey, in: txn)
                try index.terms.delete(idKey, in: txn)
                try index.ids.delete(identity, in: txn)
                identities[identity] = nil
            }
        }
        pending.removeAll(keepingCapacity: true)

        // Postings: one read and one write per key, in key order.
        let entries = Array(changes)
        changes.removeAll()
        let order = ByteOrder.order(of: entries.map(\.key.term), prefixes: entries.map(\.key.block))
        for i in order {
            let (termKey, list) = entries[i]
            let key = TextIndex.postingKey(block: termKey.block, term: termKey.term)
            let merged = try index.postings.withValue(forKey: key, in: txn) { existing in
                try PostingList.merge(existing, changes: list[...])
            }
            if let merged {
                // Present before: merged may be nil (no document left).
                if let value = merged { try index.postings.put(value, forKey: key, in: txn) }
                else { try index.postings.delete(key, in: txn) }
            } else if let value = try PostingList.merge(nil, changes: list[...]) {
                try index.postings.put(value, forKey: key, in: txn)
            }
        }

        // Attribute index: only keys that changed.
        for key in removedValues.subtracting(addedValues).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            try index.values.delete(key, in: txn)
        }
        for key in addedValues.subtracting(removedValues).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            try index.values.put([], forKey: key, in: txn)
        }
        try index.meta.put(stats!.encoded(), forKey: "stats", in: txn)
        let known = try index.textFieldNames(in: txn)
        if !fieldNames.isSubset(of: known) {
            try index.meta.put(TextIndex.encodeNames(known.union(fieldNames)), forKey: "fields", in: txn)
        }
    }
}
