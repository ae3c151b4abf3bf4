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
/// It is the store's index (``ActivityIndex``): applied behind the log by
/// the indexer, in the index environment, never in the commit
/// (`Docs/Architecture.md`, "The index"). Its ``prepare(_:log:)`` runs on
/// the indexer's preparing thread: it decodes the event, finds its user's
/// space in the log's own space directory (in the log transaction the
/// event was read in), and tokenizes the documents it upserts
/// (``SearchChange``); the writer applies what was prepared.
///
/// Each user space has its own documents, postings and BM25 statistics
/// (``TextIndex/space(_:)``, keyed by the space's id from ``SpaceDirectory``):
/// a search ranks with its user's statistics and reads its user's keys only.
///
/// ```swift
/// let hits = try store.eventStore.readIndex { index, log in
///     try store.indexViews.search.index.space(0).search("latte", now: Date(), in: index)
/// }
/// ```
///
/// Its writer keeps one ``TextIndexWriter`` per space touched in a
/// transaction, marks the end of each event (``TextIndexWriter/endGroup()``:
/// an event's new documents make one run of postings) and flushes them in
/// ``ProjectionWriter/finish()`` (by space id), so that a batch of items
/// writes each postings key once, and what is written depends on the events
/// alone, not on how they were grouped into transactions; an event that
/// removes documents is flushed at once (see ``Writer/apply(_:prepared:)``).
public struct KeywordIndexProjection: Projection {
    public var name: String { "search.keywords" }
    /// 13 (the layout: runs in front-coded pages of about 256 terms, a
    /// value of one document without its last offset, no term lists, items' content referred to in
    /// the log, one attribute-index key per value and block, sealed postings
    /// in tiers of 4 blocks, with a score bound per block of 16 documents
    /// or more, a document's own identifier in `ids` alone; 12: documents
    /// stored 128 a value, ``DocumentPage``; 13: identities in sorted,
    /// front-coded pages of about 64, ``SortedPages``) and the
    /// tokenizer that made the terms (``Tokenizer/identityNumber``:
    /// its rules and ICU's version), so that a process with another ICU
    /// rebuilds the index rather than remove a document's terms as another
    /// tokenizer splits its stored text.
    public var version: UInt32 { 13 * 1_000_000 + Tokenizer.identityNumber }
    public var databaseNames: [String] { TextIndex.databaseNames(prefix: Self.prefix) }

    static let prefix = "search."

    /// The text index. Its content readers read item documents' content in
    /// the log: give its reads the log's transaction (`contentIn:`).
    public let index: TextIndex
    /// The log environment's space directory: events' spaces are found in
    /// the log's transactions, never in the index environment.
    let spaces: SpaceDirectory

    /// Opens the index's databases in `txn` (a transaction of the index
    /// environment); `spaces` and `payloads` are the log environment's.
    init(openingIn txn: WriteTransaction, spaces: SpaceDirectory, payloads: LogPayloads) throws {
        var index = try TextIndex(openingIn: txn, prefix: Self.prefix)
        // An item document's content is its item's bytes in the log (ItemContentReference).
        index.contentReader = { reference, log in
            try ItemContentReference.content(reference, in: LogReader(payloads: payloads, transaction: log))
        }
        // A query's check of one value reads that value of the item's bytes alone.
        index.namedContentReader = { reference, name, log in
            try ItemContentReference.namedContent(reference, name, in: LogReader(payloads: payloads, transaction: log))
        }
        self.index = index
        self.spaces = spaces
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

    /// The user and item documents of a `searchableItems.indexed` event,
    /// read from the payload's bytes (``ItemSlices``, ``ItemWire``) rather
    /// than by decoding the whole message: the same documents
    /// ``itemDocuments(_:in:)`` makes from the decoded event. Nil when the
    /// bytes are not in the shape the walk takes (then the caller decodes
    /// the event whole, which says what they hold or why not), or for
    /// another event.
    static func itemDocumentsFromWire(_ recorded: RecordedEvent) throws -> (user: String, documents: [IndexDocument])? {
        guard let (user, items) = IndexedItemsWire.read(recorded, attributes: true) else { return nil }
        return (user, items.map { slice, item in
            var doc = SearchDocuments.item(item)
            doc.contentReference = ItemContentReference(position: recorded.position, slice: slice).bytes
            return doc
        })
    }

    // MARK: Preparing

    /// What `recorded` changes in the index (``SearchChange``), with its
    /// documents tokenized: on the indexer's preparing thread, in the log
    /// transaction `log` the event was read in. Nil for an event that
    /// changes nothing here.
    public func prepare(_ recorded: RecordedEvent, log: LogReader) throws -> (any Sendable)? {
        let txn = log.transaction
        if let forgotten = try spaces.forgottenSpace(by: recorded, in: txn) {
            return SearchChange(space: forgotten, operations: [.removeAll])
        }
        var tokenizer = Tokenizer()
        if let (user, documents) = try Self.itemDocumentsFromWire(recorded) {
            let space = try spaces.appliedID(of: user, recorded, in: txn)
            return SearchChange(space: space, operations: try documents.map { .upsert(try PreparedDocument($0, tokenizer: &tokenizer)) })
        }
        if let event = try SpotlightEvent(recorded) {
            let space = try spaces.appliedID(of: event.user, recorded, in: txn)
            switch event {
            case .itemsIndexed(let m):
                return SearchChange(space: space, operations: try Self.itemDocuments(m, in: recorded).map {
                    .upsert(try PreparedDocument($0, tokenizer: &tokenizer))
                })
            case .itemsDeleted(let m):
                return SearchChange(space: space, removingItems: m.removedIdentifiers)
            case .domainsDeleted(let m):
                return SearchChange(space: space, removingItems: m.removedIdentifiers)
            case .allDeleted(let m):
                return SearchChange(space: space, removingItems: m.removedIdentifiers)
            case .expiredPurged(let m):
                return SearchChange(space: space, removingItems: m.removedIdentifiers)
            case .batchCommitted:
                return nil
            }
        }
        guard let event = try ActivityEvent(recorded), let user = event.user else { return nil }
        let operations: [SearchChange.Operation]
        switch event {
        case .saved(let m):
            // Saved for prediction only: what the key held before leaves the index.
            operations = m.copy.eligibleForSearch
                ? [.upsert(try PreparedDocument(SearchDocuments.activity(key: m.key, m.copy), tokenizer: &tokenizer))]
                : [.remove(kind: SearchDocuments.activityKind, identifier: m.key)]
        case .savedDeleted(let m):
            operations = m.removedKeys.map { .remove(kind: SearchDocuments.activityKind, identifier: $0) }
        case .savedAllDeleted(let m):
            operations = m.removedKeys.map { .remove(kind: SearchDocuments.activityKind, identifier: $0) }
        default:
            return nil
        }
        return SearchChange(space: try spaces.appliedID(of: user, recorded, in: txn), operations: operations)
    }

    // MARK: Writing

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        throw PayloadError("the keyword index is applied by the indexer, which hands its writer the log it reads")
    }

    /// A replaced item's old text is read from `log`, the log being applied.
    public func makeWriter(in txn: WriteTransaction, log: LogReader) throws -> any ProjectionWriter {
        Writer(projection: self, transaction: txn, log: log)
    }

    final class Writer: ProjectionWriter {
        let projection: KeywordIndexProjection
        let txn: WriteTransaction
        let log: LogReader
        /// One writer per space touched in this transaction, by space id.
        private var writers: [UInt32: TextIndexWriter] = [:]
        /// Reads the content of item documents from the log being applied.
        let content: TextIndex.ContentSource

        init(projection: KeywordIndexProjection, transaction: WriteTransaction, log: LogReader) {
            self.projection = projection
            self.txn = transaction
            self.log = log
            content = { reference in try ItemContentReference.content(reference, in: log) }
        }

        private func writer(space: UInt32) -> TextIndexWriter {
            if let existing = writers[space] { return existing }
            // Groups are the events, from the first one: runs are a function of the log, not of transactions.
            let writer = projection.index.space(space).writer(in: txn, marksGroups: true, content: content)
            writers[space] = writer
            return writer
        }

        func apply(_ recorded: RecordedEvent) throws {
            try apply(recorded, prepared: try projection.prepare(recorded, log: log))
        }

        func apply(_ recorded: RecordedEvent, prepared: (any Sendable)?) throws {
            guard let change = prepared as? SearchChange else { return }
            if change.operations.first.map({ if case .removeAll = $0 { true } else { false } }) == true {
                let writer = writers.removeValue(forKey: change.space)
                    ?? projection.index.space(change.space).writer(in: txn, marksGroups: true, content: content)
                try writer.removeAll()
                return
            }
            let writer = writer(space: change.space)
            var removed = false
            for operation in change.operations {
                switch operation {
                case .upsert(let document):
                    try writer.upsert(document)
                case .remove(let kind, let identifier):
                    if try writer.remove(kind: kind, identifier: identifier) { removed = true }
                case .removeAll:
                    break
                }
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
    }
}

/// What one event changes in the keyword index, made by
/// ``KeywordIndexProjection/prepare(_:log:)`` on the indexer's preparing
/// thread: the space it acts in and its operations, documents tokenized.
struct SearchChange: Sendable {
    enum Operation: Sendable {
        /// A document, tokenized (its item's content referred to in the log).
        case upsert(PreparedDocument)
        case remove(kind: String, identifier: String)
        /// The space goes whole (a forgotten user).
        case removeAll
    }

    let space: UInt32
    let operations: [SearchChange.Operation]

    init(space: UInt32, operations: [SearchChange.Operation]) {
        self.space = space
        self.operations = operations
    }

    init(space: UInt32, removingItems identifiers: [String]) {
        self.init(space: space, operations: identifiers.map { .remove(kind: SearchDocuments.itemKind, identifier: $0) })
    }
}
