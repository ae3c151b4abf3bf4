import EventLog
import Foundation
import LMDB
import TextIndex

/// The keyword inverted index as a projection: a ``TextIndex`` (databases
/// `search.*`) fed by Core Spotlight's item events (documents of kind
/// `item`) and by saved-activity events for copies eligible for search
/// (kind `activity`, under the saved key). A removed, replaced or deleted
/// item or copy leaves the index; a copy saved again without
/// `eligibleForSearch` leaves it too.
///
/// Each user space has its own documents, postings and BM25 statistics
/// (``TextIndex/space(_:)``, keyed by the space's id from ``SpaceDirectory``):
/// a search ranks with its user's statistics and reads its user's keys only.
///
/// ```swift
/// let hits = try store.read { txn in try store.views.search.index.space(0).search("latte", now: Date(), in: txn) }
/// ```
///
/// Its writer keeps one ``TextIndexWriter`` per space touched in a
/// transaction, marks the end of each event (``TextIndexWriter/endGroup()``:
/// an event's new documents make one run of postings) and flushes them in
/// ``ProjectionWriter/finish()`` (by space id), so that a batch of items
/// writes each postings key once, and what is written depends on the events
/// alone, not on how they were grouped into transactions; an event that
/// removes documents is flushed at once (see ``Writer/apply(_:)``).
public struct KeywordIndexProjection: Projection {
    public var name: String { "search.keywords" }
    /// 11 (the layout: runs in front-coded pages of about 256 terms, a
    /// value of one document without its last offset, no term lists, items' content referred to in
    /// the log, one attribute-index key per value and block, sealed postings
    /// in tiers of 4 blocks, with a score bound per block of 16 documents
    /// or more, a document's own identifier in `ids` alone) and the
    /// tokenizer that made the terms (``Tokenizer/identityNumber``:
    /// its rules and ICU's version), so that a process with another ICU
    /// rebuilds the index rather than remove a document's terms as another
    /// tokenizer splits its stored text.
    public var version: UInt32 { 11 * 1_000_000 + Tokenizer.identityNumber }
    public var databaseNames: [String] { TextIndex.databaseNames(prefix: Self.prefix) }

    static let prefix = "search."

    /// The text index, for reads (`search`, `query`, `document`) through
    /// ``TextIndex/space(_:)``.
    public let index: TextIndex
    let spaces: SpaceDirectory
    /// Item documents the façade tokenized ahead of the write (see
    /// ``prepareAhead(_:)``); the writer reuses an entry only when it equals
    /// what it derives from the event, so the projection stays a pure
    /// function of the events.
    let preparedDocuments = PreparedDocumentCache()
    /// The Core Spotlight event the item store decoded (applied before this
    /// projection in ``ActivityViews``), taken instead of decoding it again.
    let decodedEvents: DecodedEventCache

    public init(openingIn txn: WriteTransaction, spaces: SpaceDirectory) throws {
        try self.init(openingIn: txn, spaces: spaces, decodedEvents: DecodedEventCache())
    }

    init(openingIn txn: WriteTransaction, spaces: SpaceDirectory, decodedEvents: DecodedEventCache) throws {
        var index = try TextIndex(openingIn: txn, prefix: Self.prefix)
        // An item document's content is its item's bytes in the log (ItemContentReference).
        if let payloads = try LogPayloads(openingIn: txn) {
            index.contentReader = { reference, txn in
                try ItemContentReference.content(reference, in: LogReader(payloads: payloads, transaction: txn))
            }
            // A query's check of one value reads that value of the item's bytes alone.
            index.namedContentReader = { reference, name, txn in
                try ItemContentReference.namedContent(reference, name, in: LogReader(payloads: payloads, transaction: txn))
            }
        }
        self.index = index
        self.spaces = spaces
        self.decodedEvents = decodedEvents
    }

    /// The documents of the items `m` indexes, in order, each item's content
    /// referred to in `recorded`'s payload (kept once, in the log) rather
    /// than copied.
    static func itemDocuments(_ m: Activitylog_V1_SearchableItemsIndexed, in recorded: RecordedEvent) -> [IndexDocument] {
        let slices = ItemSlices.find(in: recorded.payload).flatMap { $0.count == m.items.count ? $0 : nil }
        return m.items.enumerated().map { i, indexed in
            var doc = SearchDocuments.item(indexed.item)
            if let slice = slices?[i] {
                doc.contentReference = ItemContentReference(position: recorded.position, slice: slice).bytes
            }
            return doc
        }
    }

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        Writer(index: index, spaces: spaces, transaction: txn, prepared: preparedDocuments, decodedEvents: decodedEvents, log: nil)
    }

    /// A replaced item's old text is read from `log`, the log being applied
    /// (in a rebuild, the live store's: the scratch views have no log).
    public func makeWriter(in txn: WriteTransaction, log: LogReader) throws -> any ProjectionWriter {
        Writer(index: index, spaces: spaces, transaction: txn, prepared: preparedDocuments, decodedEvents: decodedEvents, log: log)
    }

    final class Writer: ProjectionWriter {
        let index: TextIndex
        let spaces: SpaceDirectory
        let txn: WriteTransaction
        let prepared: PreparedDocumentCache
        let decodedEvents: DecodedEventCache
        /// One writer per space touched in this transaction, by space id.
        private var writers: [UInt32: TextIndexWriter] = [:]
        /// The writer of the current event's space.
        private var writer: TextIndexWriter!
        /// Reads the content of item documents from the log being applied (nil: the index's own reader).
        let content: TextIndex.ContentSource?

        init(index: TextIndex, spaces: SpaceDirectory, transaction: WriteTransaction, prepared: PreparedDocumentCache,
             decodedEvents: DecodedEventCache, log: LogReader?) {
            self.index = index
            self.spaces = spaces
            self.txn = transaction
            self.prepared = prepared
            self.decodedEvents = decodedEvents
            content = log.map { log in { reference in try ItemContentReference.content(reference, in: log) } }
        }

        private func makeWriter(space: UInt32) -> TextIndexWriter {
            index.space(space).writer(in: txn, marksGroups: true, content: content)
        }

        private func selectWriter(user: String, _ recorded: RecordedEvent) throws {
            let space = try spaces.appliedID(of: user, recorded, in: txn)
            if let existing = writers[space] {
                writer = existing
            } else {
                // Groups are the events, from the first one: runs are a function of the log, not of transactions.
                writer = makeWriter(space: space)
                writers[space] = writer
            }
        }

        func apply(_ recorded: RecordedEvent) throws {
            removed = false
            if let forgotten = try spaces.forgottenSpace(by: recorded, in: txn) {
                let writer = writers.removeValue(forKey: forgotten) ?? makeWriter(space: forgotten)
                try writer.removeAll()
                return
            }
            if let entry = try decodedEvents.entry(recorded, keep: false) {
                try selectWriter(user: entry.event.user, recorded)
                try apply(entry)
            } else if let event = try ActivityEvent(recorded), let user = event.user {
                try selectWriter(user: user, recorded)
                try apply(event)
            } else {
                return
            }
            // Each event ends a group of upserts (one run of postings), and an
            // event that removed documents is flushed: what the index writes
            // (which documents make one run, which id a document removed and
            // indexed again gets) is then a function of the events alone, not
            // of how they were grouped into transactions, so a rebuild (which
            // groups them differently) reproduces the databases byte for byte.
            try writer.endGroup()
            if removed { try writer.flush() }
        }

        func finish() throws {
            for space in writers.keys.sorted() { try writers[space]!.flush() }
        }

        /// Whether the current event removed a document.
        private var removed = false

        private func remove(kind: String, _ identifier: String) throws {
            if try writer.remove(kind: kind, identifier: identifier) { removed = true }
        }

        private func removeItem(_ id: String) throws {
            try remove(kind: SearchDocuments.itemKind, id)
        }

        private func apply(_ entry: DecodedEventCache.Entry) throws {
            switch entry.event {
            case .itemsIndexed(let m):
                if let documents = entry.documents {
                    // Analyzed ahead, from these very bytes (a rebuild).
                    for document in documents { try writer.upsert(document) }
                } else {
                    try upsertItems(m, in: entry.recorded)
                }
            case .itemsDeleted(let m):
                for id in m.removedIdentifiers { try removeItem(id) }
            case .domainsDeleted(let m):
                for id in m.removedIdentifiers { try removeItem(id) }
            case .allDeleted(let m):
                for id in m.removedIdentifiers { try removeItem(id) }
            case .expiredPurged(let m):
                for id in m.removedIdentifiers { try removeItem(id) }
            case .batchCommitted:
                break
            }
        }

        /// Upserts the documents of the items `m` indexes. An item the
        /// event records with the very bytes it was prepared from takes the
        /// prepared document whole (the derivation is a function of those
        /// bytes); any other item's document is derived from the event, and
        /// a prepared analysis is reused when its text is the same.
        private func upsertItems(_ m: Activitylog_V1_SearchableItemsIndexed, in recorded: RecordedEvent) throws {
            guard let slices = ItemSlices.find(in: recorded.payload), slices.count == m.items.count else {
                for doc in KeywordIndexProjection.itemDocuments(m, in: recorded) {
                    try writer.upsert(doc, reusing: prepared.entry(kind: doc.kind, identifier: doc.identifier)?.prepared)
                }
                return
            }
            for (indexed, slice) in zip(m.items, slices) {
                let reference = ItemContentReference(position: recorded.position, slice: slice).bytes
                let entry = prepared.entry(kind: SearchDocuments.itemKind, identifier: indexed.item.uniqueIdentifier)
                if let entry, let bytes = entry.recordedItem, Self.equal(bytes, recorded.payload, slice) {
                    prepared.takenWhole()
                    try writer.upsert(entry.prepared, contentReference: reference)
                } else {
                    var doc = SearchDocuments.item(indexed.item)
                    doc.contentReference = reference
                    try writer.upsert(doc, reusing: entry?.prepared)
                }
            }
        }

        /// Whether `bytes` are those of `payload[slice]` (one `memcmp`).
        private static func equal(_ bytes: [UInt8], _ payload: [UInt8], _ slice: Range<Int>) -> Bool {
            guard bytes.count == slice.count, slice.upperBound <= payload.count else { return false }
            guard !bytes.isEmpty else { return true }
            return bytes.withUnsafeBytes { a in
                payload.withUnsafeBytes { p in memcmp(a.baseAddress!, p.baseAddress! + slice.lowerBound, a.count) == 0 }
            }
        }

        private func apply(_ event: ActivityEvent) throws {
            switch event {
            case .saved(let m):
                if m.copy.eligibleForSearch {
                    try writer.upsert(SearchDocuments.activity(key: m.key, m.copy))
                } else {
                    // Saved for prediction only: what the key held before leaves the index.
                    try remove(kind: SearchDocuments.activityKind, m.key)
                }
            case .savedDeleted(let m):
                for key in m.removedKeys { try remove(kind: SearchDocuments.activityKind, key) }
            case .savedAllDeleted(let m):
                for key in m.removedKeys { try remove(kind: SearchDocuments.activityKind, key) }
            default:
                break
            }
        }
    }
}
