import Foundation
import LMDB

/// A keyword index with free-text search and a query language, kept in
/// named LMDB databases of any environment.
///
/// The index is a library for a projection: the caller opens it once, then
/// in each write transaction makes a ``TextIndexWriter``, upserts and
/// removes documents, and calls ``TextIndexWriter/flush()`` before the
/// transaction commits. It knows nothing of what the documents are.
///
/// ```swift
/// let index = try env.write { txn in try TextIndex(openingIn: txn, prefix: "search.") }
/// try env.write { txn in
///     let writer = index.writer(in: txn)
///     try writer.upsert(IndexDocument(kind: "item", identifier: "order-1", fields: ["title": ["Oat latte"]]))
///     try writer.flush()
/// }
/// let hits = try env.read { txn in try index.search("lat", now: Date(), in: txn) }
/// let matches = try env.read { txn in try index.query(#"title == "oat*"c"#, now: Date(), in: txn) }
/// ```
///
/// Databases (each name after `prefix`; layouts in `Docs/Search.md`):
/// `ids` (kind and identifier → document id, in sorted pages of about 64: ``SortedPages``), `docs` (page of 128 document
/// ids → their stored documents; ``DocumentPage``), `terms` (no longer written: a replaced or removed document's
/// terms come from tokenizing its stored text again; kept so that a rebuild
/// empties what an earlier version stored there),
/// `postings` (tier of 4 sealed blocks and term → documents), `blocks`
/// (sealed blocks of the newest tier, until it has 4), `runs` (the open
/// block's postings, one immutable run a flush; ``RunDirectory``),
/// `values` (attribute value and block → the block's documents with it; ``AttributeBlock``),
/// `masks` (block → which text fields each document has), `meta` (statistics).
/// Every key starts with a space id (u32, big-endian): ``space(_:)`` scopes
/// the index to one space, with its own documents, ids and statistics.
///
/// Everything written is a function of the calls made: no clock, no
/// randomness, no dictionary order. The same calls in the same transactions
/// give the same keys and values.
public struct TextIndex: Sendable {
    /// Longest identifier, in UTF-8 bytes.
    public static let maximumIdentifierLength = 256
    /// Documents per postings block: ids `b << blockShift ..< (b + 1) << blockShift`
    /// share the postings keys of block `b`.
    static let blockShift: UInt32 = 12
    static let blockSize = 1 << Int(blockShift)

    /// `space ‖ first identity` → a page of identities (`kind 0x00
    /// identifier`) and their document ids (varint), sorted and
    /// front-coded: ``idPages``.
    let ids: Database<[UInt8], [UInt8]>
    /// The space's identities → document ids, as ``SortedPages`` of `ids`.
    var idPages: SortedPages { SortedPages(ids) }
    /// `space ‖ page ‖ chunk` → a chunk of a ``DocumentPage`` (the records
    /// of 128 documents; ``DocumentChunks``).
    let docs: Database<[UInt8], [UInt8]>
    /// Written by versions before runs (each document's terms); now always
    /// empty, listed so that a rebuild of an older store empties it.
    let terms: Database<SpaceKey, [UInt8]>
    /// Complete tiers of sealed blocks: `space ‖ tier ‖ term` → ``PostingTier``.
    let postings: Database<[UInt8], [UInt8]>
    /// The sealed blocks of the space's newest tier, while it has fewer than
    /// four: `space ‖ block ‖ term` → postings.
    let blocks: Database<[UInt8], [UInt8]>
    /// The open block's runs: `space ‖ block ‖ u16 start ‖ first term` → a page of postings (``RunPage``).
    let runs: Database<[UInt8], [UInt8]>
    let values: Database<[UInt8], [UInt8]>
    let masks: Database<SpaceKey, [UInt8]>
    let meta: Database<[UInt8], [UInt8]>
    /// The attribute names the query language accepts.
    public let queryAttributes: Set<String>
    /// The space this value reads and writes: 0 for the index as opened,
    /// another for a value made by ``space(_:)``.
    public private(set) var spaceId: UInt32 = 0
    /// Scoring scratch of ended searches, shared by the copies of this value.
    let scratches = Searcher.ScoreScratch.Pool()

    /// Reads the text fields and attributes of a document stored by
    /// reference (its ``IndexDocument/contentReference``).
    public typealias ContentSource = (UnsafeRawBufferPointer) throws -> Content
    /// What a document stored by reference holds besides its header.
    public typealias Content = (fields: [String: [String]], attributes: [String: AttributeValue])
    /// What reads, in a transaction, the content of the documents whose
    /// caller keeps it (``IndexDocument/contentReference``): what a query
    /// checking a value and ``document(kind:identifier:in:)`` call. Nil when
    /// no document is stored by reference.
    ///
    /// ```swift
    /// var index = try TextIndex(openingIn: txn)
    /// index.contentReader = { reference, txn in
    ///     let doc = try myStore.document(at: reference, in: txn)
    ///     return (doc.fields, doc.attributes)
    /// }
    /// ```
    public var contentReader: (@Sendable (UnsafeRawBufferPointer, ReadTransaction) throws -> Content)?
    /// Reads one name of a document stored by reference: what a query
    /// checking a candidate's value calls, so that a caller need not build
    /// the whole content to give one field. It must return exactly
    /// `NamedContent(name, in: contentReader(reference, txn))`. Nil: queries
    /// read the whole content through ``contentReader``.
    ///
    /// ```swift
    /// index.namedContentReader = { reference, name, txn in
    ///     try myStore.value(named: name, at: reference, in: txn)   // .field([…]), .attribute(…) or .absent
    /// }
    /// ```
    public var namedContentReader: (@Sendable (UnsafeRawBufferPointer, String, ReadTransaction) throws -> NamedContent)?

    /// ``contentReader`` bound to `txn`.
    func contentSource(in txn: ReadTransaction) -> ContentSource? {
        guard let contentReader else { return nil }
        return { reference in try contentReader(reference, txn) }
    }

    /// The attributes of the specification's query language: Core Spotlight's
    /// attribute set, `domainIdentifier`, `uniqueIdentifier`,
    /// `expirationDate`, `kind` and `activityType`.
    public static let standardQueryAttributes: Set<String> = [
        "title", "displayName", "contentDescription", "keywords", "authorNames", "comment", "contentType",
        "contentCreationDate", "contentModificationDate", "rating", "latitude", "longitude",
        "domainIdentifier", "uniqueIdentifier", "expirationDate", "kind", "activityType",
    ]

    /// Opens the index's databases in `txn`, creating them when missing.
    /// Their names start with `prefix` (e.g. `search.`); the handles are valid
    /// in every transaction once `txn` commits.
    public init(openingIn txn: WriteTransaction, prefix: String = "search.",
                queryAttributes: Set<String> = TextIndex.standardQueryAttributes) throws {
        ids = try txn.createDatabase(prefix + "ids")
        docs = try txn.createDatabase(prefix + "docs")
        terms = try txn.createDatabase(prefix + "terms")
        postings = try txn.createDatabase(prefix + "postings")
        blocks = try txn.createDatabase(prefix + "blocks")
        runs = try txn.createDatabase(prefix + "runs")
        values = try txn.createDatabase(prefix + "values")
        masks = try txn.createDatabase(prefix + "masks")
        meta = try txn.createDatabase(prefix + "meta")
        self.queryAttributes = queryAttributes
    }

    /// Every named database an index with `prefix` owns: what a projection
    /// over it must list, so that rebuilds, snapshots and comparisons cover
    /// all of them. The one list; ``init(openingIn:prefix:queryAttributes:)`` opens these.
    public static func databaseNames(prefix: String = "search.") -> [String] {
        ["ids", "docs", "terms", "postings", "blocks", "runs", "values", "masks", "meta"].map { prefix + $0 }
    }

    /// The same index scoped to space `id`: every read and write of the
    /// result (``writer(in:)``, ``search(_:now:limit:in:)``,
    /// ``query(_:now:in:)``, ``statistics(in:)``, ``document(kind:identifier:in:)``,
    /// ``documents(in:)``) touches only that space's keys. Each space has
    /// its own document ids (dense, from 0) and its own statistics, so a
    /// space ranks exactly as an index holding only its documents would.
    /// The index as opened is space 0.
    ///
    /// ```swift
    /// let alice = index.space(1)
    /// try env.write { txn in
    ///     let writer = alice.writer(in: txn)
    ///     try writer.upsert(IndexDocument(kind: "item", identifier: "order-1", fields: ["title": ["Oat latte"]]))
    ///     try writer.flush()
    /// }
    /// try env.read { txn in try alice.search("latte", now: Date(), in: txn) }   // space 1's documents only
    /// ```
    public func space(_ id: UInt32) -> TextIndex {
        var scoped = self
        scoped.spaceId = id
        return scoped
    }

    /// A writer bound to `txn`. Call ``TextIndexWriter/flush()`` before the
    /// transaction commits; make a new writer in each transaction (and in each
    /// run of a write closure that LMDB repeats after growing the map).
    ///
    /// With `marksGroups`, the caller ends every group of upserts with
    /// ``TextIndexWriter/endGroup()`` from the first on, and the writer
    /// flushes by itself only at a group's end: what it writes then depends
    /// on the groups alone, not on how they were spread over transactions
    /// (a group of more than 4,096 documents is not cut in two).
    ///
    /// `content` reads the content of documents stored by reference (a
    /// replaced one is tokenized again); by default ``contentReader`` in `txn`.
    public func writer(in txn: WriteTransaction, marksGroups: Bool = false, content: ContentSource? = nil) -> TextIndexWriter {
        let writer = TextIndexWriter(index: self, transaction: txn)
        writer.marksGroups = marksGroups
        writer.content = content ?? contentSource(in: txn)
        return writer
    }

    /// The space's statistics as of `txn`.
    public func statistics(in txn: ReadTransaction) throws -> IndexStatistics {
        try meta.withValue(forKey: metaKey(TextIndex.statisticsKey), in: txn) { try IndexStatistics(decoding: $0) }
            ?? IndexStatistics()
    }

    /// The stored document of `kind` and `identifier` in the space, or nil.
    /// `contentIn`: where ``contentReader`` reads (``query(_:now:in:contentIn:)``).
    public func document(kind: String, identifier: String, in txn: ReadTransaction,
                         contentIn: ReadTransaction? = nil) throws -> IndexDocument? {
        guard let id = try documentId(TextIndex.identityKey(kind: kind, identifier: identifier), in: txn) else { return nil }
        return try withDocumentRecord(id, in: txn) {
            try DocumentRecord.decode($0, content: contentSource(in: contentIn ?? txn))
        }
    }

    /// The stored record of the space's document `id` (``DocumentRecord``,
    /// on its ``DocumentPage``) given to `body`; nil when there is none.
    func withDocumentRecord<R>(_ id: UInt32, in txn: ReadTransaction, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        // Nearly always in chunk 0: one `mdb_get`, no cursor.
        var cut = false
        let inFirst = try docs.withValue(forKey: DocumentChunks.key(space: spaceId, page: DocumentPage.page(of: id), chunk: 0), in: txn) { first -> R? in
            guard let range = try DocumentPage.range(DocumentPage.slot(of: id), first: first) else { return nil }
            guard range.upperBound <= first.count else {
                cut = true
                return nil
            }
            return try body(UnsafeRawBufferPointer(rebasing: first[range]))
        }
        if !cut { return inFirst ?? nil }
        let arena = DocumentChunks.Arena()
        return try withExtendedLifetime(arena) {
            try DocumentChunks.record(id, space: spaceId, cursor: docs.cursor(in: txn), arena: arena).map(body)
        }
    }

    /// Every stored document of the space, by internal id (the order they
    /// were first added). `contentIn`: where ``contentReader`` reads.
    public func documents(in txn: ReadTransaction, contentIn: ReadTransaction? = nil) throws -> [IndexDocument] {
        var result: [IndexDocument] = []
        let content = contentSource(in: contentIn ?? txn)
        try DocumentChunks.forEachPage(space: spaceId, cursor: docs.cursor(in: txn)) { _, page in
            try page.withUnsafeBytes { bytes in
                try DocumentPage.forEachRecord(in: bytes) { _, record in result.append(try DocumentRecord.decode(record, content: content)) }
            }
        }
        return result
    }

    /// Deletes every key of the space from every database: one cursor range
    /// a database (the space's keys are contiguous in each), the other
    /// spaces' bytes untouched.
    func removeSpace(in txn: WriteTransaction) throws {
        let prefix = spacePrefix
        try ids.removeAll(withPrefix: prefix, in: txn)
        try docs.removeAll(withPrefix: prefix, in: txn)
        try terms.removeAll(withPrefix: prefix, in: txn)
        try postings.removeAll(withPrefix: prefix, in: txn)
        try blocks.removeAll(withPrefix: prefix, in: txn)
        try runs.removeAll(withPrefix: prefix, in: txn)
        try values.removeAll(withPrefix: prefix, in: txn)
        try masks.removeAll(withPrefix: prefix, in: txn)
        try meta.removeAll(withPrefix: prefix, in: txn)
    }

    /// Key names in `meta`, after the space id.
    static let statisticsKey = "stats"
    static let fieldNamesKey = "fields"
    static let runsKey = "runs"
    static let tokenizerKey = "tokenizer"

    /// The space id, 4 bytes big-endian: the start of every key of the space (``SpaceKey``).
    var spacePrefix: [UInt8] { SpaceKey.prefix(of: spaceId) }

    /// `rest` after the space id: a key of the space.
    func scoped(_ rest: some Collection<UInt8>) -> [UInt8] { SpaceKey(space: spaceId, rest).encoded }

    /// `space ‖ name` (ASCII), a key of database `meta`.
    func metaKey(_ name: String) -> [UInt8] { scoped(name.utf8) }

    /// The names ever used for text fields in the space (key
    /// `space ‖ "fields"` of `meta`: varint count, then each name as varint
    /// length and UTF-8, sorted by bytes). Only grows, until
    /// ``TextIndexWriter/removeAll()``. A query on a name that was never a
    /// text field needs no postings.
    func textFieldNames(in txn: ReadTransaction) throws -> Set<String> {
        try meta.withValue(forKey: metaKey(TextIndex.fieldNamesKey), in: txn) { bytes in
            var r = ByteReader(bytes)
            return try TextIndexError.reading("text field names") {
                let n = try r.int()
                var names = Set<String>()
                for _ in 0..<n { names.insert(try r.string()) }
                return names
            }
        } ?? []
    }

    static func encodeNames(_ names: Set<String>) -> [UInt8] {
        var w = ByteWriter()
        let sorted = names.sorted(by: utf8Less)
        w.varint(sorted.count)
        for n in sorted { w.string(n) }
        return w.bytes
    }

    /// The space's document id of `identity` (`kind 0x00 identifier`).
    func documentId(_ identity: [UInt8], in txn: ReadTransaction) throws -> UInt32? {
        try idPages.withValue(forKey: identity, prefix: spacePrefix, in: txn) { try TextIndex.decodeDocumentId($0) }
    }

    /// A document id as `ids` stores it: a varint.
    static func encodeDocumentId(_ id: UInt32) -> [UInt8] {
        var w = ByteWriter()
        w.varint(Int(id))
        return w.bytes
    }

    /// The document id `ids` stores in `bytes` (``encodeDocumentId(_:)``).
    static func decodeDocumentId(_ bytes: UnsafeRawBufferPointer) throws -> UInt32 {
        var r = ByteReader(bytes)
        let id: Int
        do throws(ByteError) { id = try r.int() } catch { throw TextIndexError.corrupt("document id in ids: \(error)") }
        guard r.isAtEnd, id <= Int(UInt32.max) else { throw TextIndexError.corrupt("document id in ids") }
        return UInt32(id)
    }

    /// `kind 0x00 identifier`: a document's identity within a space (the key
    /// of database `ids` after the space id).
    static func identityKey(kind: String, identifier: String) -> [UInt8] {
        var key = Array(kind.utf8)
        key.append(0)
        key.append(contentsOf: identifier.utf8)
        return key
    }

    /// Bit `slot` of a document's mask: it has a value in a text field of that slot.
    static func fieldMask(_ doc: IndexDocument) -> UInt8 {
        var mask: UInt8 = 0
        for (name, values) in doc.fields where !values.isEmpty { mask |= IndexField(name: name).bit }
        return mask
    }

    /// `u32 space, u32 block, term`, the key of database `postings`.
    func postingKey(block: UInt32, term: some Collection<UInt8>) -> [UInt8] {
        var key = SpaceKey(space: spaceId, capacity: 4 + term.count)
        key.append(bigEndian: block)
        key.append(term)
        return key.encoded
    }
}
