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
/// A writer is bound to one space of the index (the one of the
/// ``TextIndex`` that made it) and to one transaction: it reads and writes
/// that space's keys only. To change several spaces in one transaction, make
/// a writer per space (cheap: a few empty buffers) and flush each.
///
/// Not thread-safe, like the transaction it is bound to.
public final class TextIndexWriter {
    let index: TextIndex
    let txn: WriteTransaction
    var tokenizer = Tokenizer()
    var ranges: [Range<Int>] = []
    var occurrences: [UInt16] = []
    /// The terms of the pending documents (and, during a flush, of the ones they replace).
    /// Small at first, growing as terms come: a transaction makes a writer
    /// for every space it touches, and most hold a document or two (a table
    /// sized for a batch's thousands of terms cost 96 KB of reservations and
    /// a 16 KB reset at each of their flushes).
    var table = TermTable(expected: 64)
    var stats: IndexStatistics?
    /// The stored next document id when `stats` was read or last flushed:
    /// ids from it on are new in the pending batch.
    var flushedNextId: UInt32 = 0
    /// Identity key → document id, for identities touched in this transaction.
    var identities: [TermKey: UInt32] = [:]
    var pending: [UInt32: Pending] = [:]
    /// Where groups of upserts ended since the last flush (``endGroup()``):
    /// the next document id at each end, increasing.
    var groupEnds: [UInt32] = []
    /// Whether the caller marks groups: then the writer flushes by itself only at a group's end.
    var marksGroups = false
    /// Reads the content of documents stored by reference (``TextIndex/writer(in:marksGroups:content:)``).
    var content: TextIndex.ContentSource?
    /// The text field names of every document upserted since the last
    /// flush, replaced ones included: the space's field names are what was
    /// ever upserted, however upserts were grouped into flushes.
    var upsertedFieldNames = Set<String>()
    /// Whether the space's tokenizer stamp was checked (or written) by this writer.
    var tokenizerChecked = false
    /// The term of the run page entry being read (pages are front-coded).
    let pageTerm = TermBuffer()

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
        let analyzed = AnalyzedDocument(doc, tokenizer: &tokenizer, ranges: &ranges, table: &table, scratch: &occurrences)
        try pend(id, doc, identity: identity, analyzed)
    }

    /// Adds or replaces a document analyzed ahead of time (see
    /// ``PreparedDocument``): the same as upserting its document, without
    /// the tokenizing.
    public func upsert(_ prepared: PreparedDocument) throws {
        try pend(prepared.document, analyzedAs: prepared)
    }

    /// Pends the upsert of `doc` (of `prepared`'s identity) with `prepared`'s analysis.
    private func pend(_ doc: IndexDocument, analyzedAs prepared: PreparedDocument) throws {
        let id = try documentId(prepared.identity, allocate: true)!
        try pend(id, doc, identity: prepared.identity, prepared.analyzed(in: &table))
    }

    /// Holds the upsert of document `id` until the next flush (replacing one
    /// pending for it), and flushes when enough are pending.
    private func pend(_ id: UInt32, _ doc: IndexDocument, identity: [UInt8], _ analyzed: AnalyzedDocument) throws {
        pending[id] = .upsert(doc, identity: identity, analyzed)
        upsertedFieldNames.formUnion(doc.fields.keys)
        try flushIfFull()
    }

    /// Ends a group of upserts: the new documents upserted since the last
    /// group's end or flush make one run of the open block, exactly as if
    /// ``flush()`` were called here (the same bytes are written), without
    /// writing anything now. A projection marks each event's end and
    /// flushes once a transaction: what it writes then depends on its
    /// events, not on how they were grouped into transactions. A writer
    /// told where groups end flushes by itself (every 4,096 pending
    /// documents) only at a group's end.
    ///
    /// ```swift
    /// for event in events {
    ///     for doc in event.documents { try writer.upsert(doc) }
    ///     try writer.endGroup()
    /// }
    /// try writer.flush()
    /// ```
    public func endGroup() throws {
        marksGroups = true
        if let next = stats?.nextDocumentId, next > max(groupEnds.last ?? 0, flushedNextId) {
            groupEnds.append(next)
        }
        if pending.count >= TextIndexWriter.autoFlushCount { try flush() }
    }

    /// Flushes every 4,096 pending documents, unless groups are marked.
    func flushIfFull() throws {
        if !marksGroups && pending.count >= TextIndexWriter.autoFlushCount { try flush() }
    }

    /// Removes the document of `kind` and `identifier`; false when there is none.
    @discardableResult
    public func remove(kind: String, identifier: String) throws -> Bool {
        let identity = TextIndex.identityKey(kind: kind, identifier: identifier)
        guard let id = try documentId(identity, allocate: false) else { return false }
        if case .remove = pending[id] { return false }
        // A document upserted in this transaction is written before it is
        // removed: what it leaves behind (the text field names it used) must
        // not depend on whether the upsert and the removal shared a
        // transaction, or a rebuild, which groups events differently, would
        // not reproduce the databases byte for byte.
        if case .upsert = pending[id] { try flush() }
        pending[id] = .remove(identity: identity)
        return true
    }

    /// Removes every document of the writer's space, with its statistics
    /// (ids start again at 0): every key of the space in every database
    /// goes, one cursor range a database, and no other space's key is read
    /// or written. Dropping a whole space (forgetting a user) is this call.
    public func removeAll() throws {
        pending.removeAll()
        groupEnds.removeAll()
        upsertedFieldNames.removeAll()
        identities.removeAll()
        table.removeAll()
        try index.removeSpace(in: txn)
        stats = IndexStatistics()
        flushedNextId = 0
        tokenizerChecked = false
    }

    /// The space's terms must have been made by this process's tokenizer
    /// (key `space ‖ "tokenizer"` of `meta`: ``Tokenizer/identity``, written
    /// by the space's first flush): a replaced or removed document's terms
    /// are found by tokenizing its stored text again, which gives the terms
    /// it was indexed with only with the same tokenizer.
    func checkTokenizer() throws {
        guard !tokenizerChecked else { return }
        let key = index.metaKey(TextIndex.tokenizerKey)
        let current = Array(Tokenizer.identity.utf8)
        if let stored = try index.meta.get(key, in: txn) {
            guard stored == current else {
                throw TextIndexError.tokenizerChanged(stored: String(decoding: stored, as: UTF8.self), current: Tokenizer.identity)
            }
        } else {
            try index.meta.put(current, forKey: key, in: txn)
        }
        tokenizerChecked = true
    }

    /// Reads the statistics once per writer (they then live in memory until
    /// the last flush writes them).
    func loadStatistics() throws {
        guard stats == nil else { return }
        stats = try index.statistics(in: txn)
        flushedNextId = stats!.nextDocumentId
    }

    /// The id of `identity`: touched earlier in this transaction, stored, or
    /// (when `allocate`) a new one.
    func documentId(_ identity: [UInt8], allocate: Bool) throws -> UInt32? {
        if let id = identities[TermKey(term: identity)] { return id }
        if let id = try index.documentId(identity, in: txn) {
            identities[TermKey(term: identity)] = id
            return id
        }
        guard allocate else { return nil }
        try loadStatistics()
        let id = stats!.nextDocumentId
        guard id < UInt32.max else { throw TextIndexError.corrupt("document ids exhausted; rebuild the index") }
        stats!.nextDocumentId += 1
        identities[TermKey(term: identity)] = id
        return id
    }

    /// `changes` in key order. They were appended by increasing document id,
    /// a removal before a set, so within one postings key (block, rank) they
    /// are already in order: a stable counting sort on the key's group is
    /// enough when the batch spans few blocks (the usual case); otherwise a
    /// comparison sort.
    static func sortedByKey(_ changes: [PostingChange], termCount: Int) -> [PostingChange] {
        guard let first = changes.first else { return changes }
        var lo = first.block, hi = first.block
        for c in changes { lo = min(lo, c.block); hi = max(hi, c.block) }
        let buckets = Int(hi - lo + 1) * termCount
        guard buckets <= 4 * changes.count + 1024 else { return changes.sorted { $0.key < $1.key } }
        func bucket(_ c: PostingChange) -> Int {
            Int(c.block - lo) * termCount + Int((c.key >> 13) & 0x7FFF_FFFF)
        }
        var starts = [Int](repeating: 0, count: buckets + 1)
        for c in changes { starts[bucket(c) + 1] += 1 }
        for b in 0..<buckets { starts[b + 1] += starts[b] }
        return [PostingChange](unsafeUninitializedCapacity: changes.count) { out, count in
            for c in changes {
                let b = bucket(c)
                (out.baseAddress! + starts[b]).initialize(to: c)
                starts[b] += 1
            }
            count = changes.count
        }
    }

    /// Writes what was accumulated: each postings key read and written once,
    /// everything in key order.
    public func flush() throws {
        guard !pending.isEmpty else { return }
        try loadStatistics()
        try checkTokenizer()
        let ids = pending.keys.sorted()
        // 1. What the stored versions put in goes; what the new ones bring comes.
        var gathered = try gatherChanges(ids)
        // 2. Sort by postings key (block, term bytes), then offset.
        let changes = sortedForWriting(&gathered.postings)
        // 3. Postings: sealed blocks' values are read and written once per
        // key; the open block's new documents make a run, written once.
        try writePostings(changes, arena: gathered.arena)
        // 4. Documents and identities, each page read and written once.
        try writeDocuments(ids)
        // 5. Field masks: one value per block.
        try writeFieldMasks(ids)
        pending.removeAll(keepingCapacity: true)
        table.removeAll()
        // 6. Attribute index: only the (value, block) keys that changed;
        // then the statistics and the text field names.
        try writeAttributeChanges(gathered.attributes)
        try writeStatistics()
    }

    /// The changes of a flush before they are sorted: postings (keyed by
    /// document id until ``sortedForWriting(_:)``) with their payloads in
    /// `arena`, and attribute keys that go and that come (a key both old and
    /// new stays), each as `space ‖ key ‖ block ‖ offset ‖ 0 (goes) or 1 (comes)`.
    private struct FlushChanges {
        var postings: [PostingChange] = []
        var arena: [UInt8] = []
        var attributes = ByteStrings()
    }

    /// Step 1: for each pending document, its stored version's terms and
    /// attribute keys go (its stored text tokenized again, by the tokenizer
    /// that indexed it: checked before) and its new version's come; the
    /// statistics follow.
    private func gatherChanges(_ ids: [UInt32]) throws -> FlushChanges {
        var gathered = FlushChanges()
        gathered.postings.reserveCapacity(pending.count * 64)
        gathered.arena.reserveCapacity(pending.count * 256)
        let spacePrefix = index.spacePrefix
        for id in ids {
            var oldKeys: [[UInt8]] = []
            var newKeys: [[UInt8]] = []
            if let old = try index.withDocumentRecord(id, in: txn, { try DocumentRecord.decode($0, content: content) }) {
                let previous = AnalyzedDocument(old, tokenizer: &tokenizer, ranges: &ranges, table: &table,
                                                scratch: &occurrences)
                for termId in previous.termIds {
                    gathered.postings.append(PostingChange(key: UInt64(id), termId: termId, payloadStart: -1, payloadEnd: -1))
                }
                try stats!.subtract(previous.fieldLengths)
                oldKeys = AttributeKey.keys(of: old)
            }
            if case .upsert(let doc, _, let analyzed) = pending[id]! {
                // The payloads are concatenated in term order: copied at once.
                let base = Int32(gathered.arena.count)
                gathered.arena.append(contentsOf: analyzed.payloads)
                var start = base
                for (k, termId) in analyzed.termIds.enumerated() {
                    let end = base + analyzed.payloadEnds[k]
                    gathered.postings.append(PostingChange(key: UInt64(id), termId: termId, payloadStart: start, payloadEnd: end))
                    start = end
                }
                try stats!.add(analyzed.fieldLengths)
                newKeys = AttributeKey.keys(of: doc)
            }
            // Both sorted and unique: one merge walk; changes of other ids never collide (the offset ends them).
            let goes = AttributeBlock.change(of: id, adds: false), comes = AttributeBlock.change(of: id, adds: true)
            var a = 0, b = 0
            while a < oldKeys.count || b < newKeys.count {
                if b == newKeys.count || (a < oldKeys.count && oldKeys[a].lexicographicallyPrecedes(newKeys[b])) {
                    gathered.attributes.append(spacePrefix, oldKeys[a], goes)
                    a += 1
                } else if a == oldKeys.count || newKeys[b].lexicographicallyPrecedes(oldKeys[a]) {
                    gathered.attributes.append(spacePrefix, newKeys[b], comes)
                    b += 1
                } else {
                    a += 1
                    b += 1
                }
            }
        }
        return gathered
    }

    /// Step 2: `changes` keyed by postings key (block, term bytes), then
    /// offset, and sorted so.
    private func sortedForWriting(_ changes: inout [PostingChange]) -> [PostingChange] {
        let ranks = table.ranks()
        for i in changes.indices {
            let id = UInt32(truncatingIfNeeded: changes[i].key)
            changes[i].key = PostingChange.key(block: id >> TextIndex.blockShift, rank: ranks[Int(changes[i].termId)],
                                               offset: UInt16(id & UInt32(TextIndex.blockSize - 1)),
                                               isSet: changes[i].isSet)
        }
        return TextIndexWriter.sortedByKey(changes, termCount: table.count)
    }

    /// Step 4: each page of documents read and written once
    /// (``DocumentPage``); the identities that come (new ids) and go,
    /// sorted, in one pass over `ids`' pages.
    private func writeDocuments(_ ids: [UInt32]) throws {
        let space = index.spaceId
        var identityChanges: [(key: [UInt8], value: [UInt8]?)] = []
        var d = 0
        while d < ids.count {
            let pageNumber = DocumentPage.page(of: ids[d])
            let stored = try DocumentChunks.read(space: space, page: pageNumber, cursor: index.docs.cursor(in: txn))
            var page = try stored.map { try $0.withUnsafeBytes { try DocumentPage(decoding: $0) } } ?? DocumentPage()
            while d < ids.count && DocumentPage.page(of: ids[d]) == pageNumber {
                let id = ids[d]
                switch pending[id]! {
                case .upsert(let doc, let identity, _):
                    page[DocumentPage.slot(of: id)] = DocumentRecord.encode(doc)
                    // An id below `flushedNextId` is stored under this identity already.
                    if id >= flushedNextId { identityChanges.append((identity, TextIndex.encodeDocumentId(id))) }
                case .remove(let identity):
                    page[DocumentPage.slot(of: id)] = []
                    identityChanges.append((identity, nil))
                    identities[TermKey(term: identity)] = nil
                }
                d += 1
            }
            if !page.isEmpty || stored != nil {
                try DocumentChunks.write(page.isEmpty ? [] : page.encoded(), space: space, page: pageNumber, in: index.docs, txn)
            }
        }
        identityChanges.sort { $0.key.lexicographicallyPrecedes($1.key) }
        try index.idPages.apply(identityChanges, prefix: index.spacePrefix, in: txn)
    }

    /// Step 5: one value per block, 1 byte per document, without trailing
    /// zero bytes (a space's first documents cost a few bytes, not a 4 KB
    /// overflow page; the value goes when every byte is 0).
    private func writeFieldMasks(_ ids: [UInt32]) throws {
        var b = 0
        while b < ids.count {
            let block = ids[b] >> TextIndex.blockShift
            let key = SpaceKey(space: index.spaceId, block)
            var mask = try index.masks.withValue(forKey: key, in: txn) { [UInt8]($0) } ?? []
            let stored = !mask.isEmpty
            guard mask.count <= TextIndex.blockSize else { throw TextIndexError.corrupt("field masks") }
            mask.append(contentsOf: repeatElement(0, count: TextIndex.blockSize - mask.count))
            while b < ids.count && ids[b] >> TextIndex.blockShift == block {
                let offset = Int(ids[b] & UInt32(TextIndex.blockSize - 1))
                if case .upsert(let doc, _, _) = pending[ids[b]]! { mask[offset] = TextIndex.fieldMask(doc) } else { mask[offset] = 0 }
                b += 1
            }
            var end = mask.count
            while end > 0 && mask[end - 1] == 0 { end -= 1 }
            if end > 0 {
                mask.removeLast(mask.count - end)
                try index.masks.put(mask, forKey: key, in: txn)
            } else if stored {
                try index.masks.delete(key, in: txn)
            }
        }
    }

    /// Step 6's end: the statistics, where the next flush starts, and the
    /// text field names when new ones came.
    private func writeStatistics() throws {
        try index.meta.put(stats!.encoded(), forKey: index.metaKey(TextIndex.statisticsKey), in: txn)
        flushedNextId = stats!.nextDocumentId
        groupEnds.removeAll(keepingCapacity: true)
        let fieldNames = upsertedFieldNames
        upsertedFieldNames.removeAll(keepingCapacity: true)
        let known = try index.textFieldNames(in: txn)
        if !fieldNames.isSubset(of: known) {
            try index.meta.put(TextIndex.encodeNames(known.union(fieldNames)), forKey: index.metaKey(TextIndex.fieldNamesKey), in: txn)
        }
    }
}
