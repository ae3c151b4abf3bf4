import EventLog
import Foundation
import LMDB

/// The item store: every searchable item by identifier, by domain and by
/// expiration, and the client state of each named index. Core Spotlight's
/// index is write-only; this one can be listed.
///
/// Identifiers, domains and index names are unique within a user space:
/// keys start with the space's id (u32, big-endian; see ``SpaceKey``), but
/// for the expiration index, which `purgeExpired` walks across every space.
///
/// Databases:
/// - `spotlight.items`: space → a sorted map (``SortedPages``, version 6:
///   front-coded pages of about 64 identifiers, `space ‖ first identifier`
///   → the page) of uniqueIdentifier → `SearchableItemRecord`
///   message of where the item's bytes are in the log (version 4 on): the
///   position of the event that wrote it, the item's offset and length in
///   that event's payload, its expiration (since version 5 relative to the
///   default of the event's time: nothing for most items), and the
///   position that first added it when another. The item, its domain and
///   the event's time are read from the log in place (``LogPayloads``),
///   which holds them already. The expiration is kept because a forget
///   redacts the payloads in the transaction that removes the user's
///   expiration entries (the event's time stays in its record's header).
/// - `spotlight.itemsByDomain`: space, first 250 UTF-8 bytes of the domain,
///   0x00, position of the event that wrote the items (u64, big-endian) →
///   where they are in that event (``DomainEntry``: u32 byte offsets,
///   ascending). One key per event and domain, so that an event's items of
///   one domain cost one entry; their identifiers are read from the event. A
///   domain and its subdomains share a key prefix, so a recursive listing is
///   one cursor range; the component boundary is checked on the key (or,
///   for a cut domain, on the item).
/// - `spotlight.itemsByExpiration`: expiration (µs since 1970, sign bit
///   flipped, big-endian: byte order is time order), position of the event
///   that wrote the items (``ExpirationKey``) → where that event's items of
///   this expiration are in it (``DomainEntry``; version 5). One entry per
///   event and expiration, as for domains: an event's items that share the
///   default expiration cost one entry. What `purgeExpired` scans, reading
///   the expired items' space and identifiers from their events.
/// - `spotlight.clientStates`: space, index name → client state bytes.
///
/// ```swift
/// let items = try store.read { txn in try store.views.items.items(inDomain: "orders", space: 0, in: txn) }
/// ```
public struct SearchableItemStore: Projection {
    public var name: String { "spotlight.items" }
    public var version: UInt32 { 6 }
    public var databaseNames: [String] {
        ["spotlight.items", "spotlight.itemsByDomain", "spotlight.itemsByExpiration", "spotlight.clientStates"]
    }

    /// Space prefix ‖ identifier → the record, in pages.
    let records: SortedPages
    let byDomain: Database<[UInt8], [UInt8]>
    let byExpiration: Database<[UInt8], [UInt8]>
    let clientStates: Database<SpaceKey, [UInt8]>
    let spaces: SpaceDirectory
    /// The log of this environment, where the items' bytes are; nil in the
    /// scratch environment a rebuild writes (which is never read through
    /// this type).
    let log: LogPayloads?

    static let domainPrefixBytes = 250

    public init(openingIn txn: WriteTransaction, spaces: SpaceDirectory) throws {
        self.spaces = spaces
        log = try LogPayloads(openingIn: txn)
        records = SortedPages(try txn.createDatabase("spotlight.items"))
        byDomain = try txn.createDatabase("spotlight.itemsByDomain")
        byExpiration = try txn.createDatabase("spotlight.itemsByExpiration")
        clientStates = try txn.createDatabase("spotlight.clientStates")
    }

    // MARK: Reading

    /// The record as stored: without its item when it refers to the log
    /// (what removing and re-indexing need); ``rawRecord(_:space:in:)`` reads the item.
    func storedRecord(_ id: String, space: UInt32, in txn: ReadTransaction) throws -> Activitylog_V1_SearchableItemRecord? {
        guard !id.isEmpty, id.utf8.count <= 507 else { return nil }
        return try records.withValue(forKey: Array(id.utf8), prefix: SpaceKey.prefix(of: space), in: txn) {
            try Activitylog_V1_SearchableItemRecord(serializedBytes: [UInt8]($0))
        }
    }

    /// Whether `space` holds an item `id` (its record is not decoded).
    func contains(_ id: String, space: UInt32, in txn: ReadTransaction) throws -> Bool {
        guard !id.isEmpty, id.utf8.count <= 507 else { return false }
        return try records.withValue(forKey: Array(id.utf8), prefix: SpaceKey.prefix(of: space), in: txn) { _ in true } ?? false
    }

    /// Calls `body` with each identifier of `space` (UTF-8 bytes) and its
    /// record's bytes, in identifier order, until it returns false.
    func forEachRecord(space: UInt32, in txn: ReadTransaction,
                       _ body: (_ id: [UInt8], _ record: UnsafeRawBufferPointer) throws -> Bool) throws {
        let walk = try records.walker(prefix: SpaceKey.prefix(of: space), in: txn)
        var more = try walk.first()
        while more, try body(walk.key, walk.value) { more = try walk.next() }
    }

    /// The record of `id` with its item in it.
    func rawRecord(_ id: String, space: UInt32, in txn: ReadTransaction) throws -> Activitylog_V1_SearchableItemRecord? {
        try storedRecord(id, space: space, in: txn).map { try resolved($0, in: txn) }
    }

    /// `record` with what it leaves to the log filled in: its item (read
    /// from the bytes of the event it refers to), that event's time, its
    /// domain and expiration, and its first position.
    func resolved(_ record: Activitylog_V1_SearchableItemRecord, in txn: ReadTransaction) throws -> Activitylog_V1_SearchableItemRecord {
        var full = record
        if full.firstPosition == 0 { full.firstPosition = full.position }
        guard record.itemLength > 0 else { return full }
        let reader = try logReader(in: txn)
        full.item = try Self.item(of: record, in: reader)
        guard let micros = try reader.payloads.appendedAtMicros(at: record.position, in: txn) else {
            throw PayloadError("an item refers to position \(record.position), which the log does not hold")
        }
        full.indexedAtMicros = micros
        if full.item.hasDomainIdentifier { full.domainIdentifier = full.item.domainIdentifier }
        return full
    }

    /// `records` each ``resolved(_:in:)`` (nil stays nil), in their order,
    /// read in the log's order: an event's items one after another, so that
    /// each block of its payload is decompressed once (the transaction keeps
    /// the blocks it read, ``LogPayloads/withPayloadBytes(at:_:in:_:)``),
    /// whatever the order of the identifiers.
    func resolved(_ records: [Activitylog_V1_SearchableItemRecord?], in txn: ReadTransaction) throws -> [Activitylog_V1_SearchableItemRecord?] {
        let places = records.map { $0.map { ($0.position, $0.itemOffset) } }
        let order = records.indices.filter { places[$0] != nil }.sorted { places[$0]! < places[$1]! }
        var result = records
        for i in order { result[i] = try resolved(records[i]!, in: txn) }
        return result
    }

    private func logReader(in txn: ReadTransaction) throws -> LogReader {
        guard let log else {
            throw PayloadError("the item store refers to the log, and this environment has none (a rebuild's scratch views are not read)")
        }
        return LogReader(payloads: log, transaction: txn)
    }

    /// The item a record refers to (or holds, when its event's bytes were
    /// not in the shape ``ItemSlices`` takes), read through `log`.
    static func item(of record: Activitylog_V1_SearchableItemRecord, in log: LogReader) throws -> Activitylog_V1_SearchableItem {
        guard record.itemLength > 0 else { return record.item }
        let start = Int(record.itemOffset)
        return try ItemSlices.withItemBytes(at: record.position, start..<(start + Int(record.itemLength)), in: log) { bytes in
            try ItemWire.item(bytes) ?? Activitylog_V1_SearchableItem(serializedBytes: [UInt8](bytes))
        }
    }

    /// The item with this identifier in `space`, or nil.
    public func item(_ id: String, space: UInt32, in txn: ReadTransaction) throws -> IndexedItem? {
        try rawRecord(id, space: space, in: txn).map(IndexedItem.init(proto:))
    }

    /// The items with these identifiers in `space`, in the order asked (nil
    /// for one it does not hold), read from the log in its order, an
    /// event's items together (as the records of ``resolved(_:in:)``).
    public func items(_ ids: [String], space: UInt32, in txn: ReadTransaction) throws -> [IndexedItem?] {
        try resolved(ids.map { try storedRecord($0, space: space, in: txn) }, in: txn).map { $0.map(IndexedItem.init(proto:)) }
    }

    /// Every item of `space`, by identifier (UTF-8 byte order), expired ones
    /// included until they are purged.
    public func all(space: UInt32, in txn: ReadTransaction) throws -> [IndexedItem] {
        var records: [Activitylog_V1_SearchableItemRecord?] = []
        try forEachRecord(space: space, in: txn) { _, value in
            records.append(try Activitylog_V1_SearchableItemRecord(serializedBytes: [UInt8](value)))
            return true
        }
        return try resolved(records, in: txn).map { IndexedItem(proto: $0!) }
    }

    /// How many items `space` holds.
    public func count(space: UInt32, in txn: ReadTransaction) throws -> Int {
        var n = 0
        try forEachRecord(space: space, in: txn) { _, _ in
            n += 1
            return true
        }
        return n
    }

    /// Every identifier of `space`, sorted.
    func allIdentifiers(space: UInt32, in txn: ReadTransaction) throws -> [String] {
        var result: [String] = []
        try forEachRecord(space: space, in: txn) { key, _ in
            result.append(String(decoding: key, as: UTF8.self))
            return true
        }
        return result
    }

    /// The items of `space` in `domain` or below it (`orders` lists `orders`
    /// and `orders.2024`, not `orders2024`), by identifier.
    public func items(inDomain domain: String, space: UInt32, in txn: ReadTransaction) throws -> [IndexedItem] {
        try items(identifiers(inDomain: domain, space: space, in: txn), space: space, in: txn).compactMap { $0 }
    }

    /// The identifiers of the items of `space` in `domain` or below it,
    /// sorted, read from the events the domain's entries name.
    func identifiers(inDomain domain: String, space: UInt32, in txn: ReadTransaction) throws -> [String] {
        guard !domain.isEmpty else { return [] }
        let prefix = SpaceKey.indexPrefix(space: space, domain, limit: Self.domainPrefixBytes, exact: false).encoded
        let log = try logReader(in: txn)
        var found: [String] = []
        let cursor = try byDomain.cursor(in: txn)
        var entry = try cursor.seek(atOrAfter: prefix)
        while let (key, value) = entry, key.starts(with: prefix) {
            // Domains hold no NUL (checked by the rules), so the first 0x00 after the space ends the domain part.
            guard let split = key[4...].firstIndex(of: 0), key.count == split + 9, let parts = DomainEntry.parts(value) else {
                throw PayloadError("spotlight.itemsByDomain holds a malformed entry (\(key.count)-byte key, \(value.count)-byte value)")
            }
            let position = key[(split + 1)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let cut = split - 4 >= Self.domainPrefixBytes
            if cut || SpotlightRules.isInDomain(utf8: key[4..<split], domain) {
                for item in try Self.items(at: position, parts: parts, in: log).items
                where !cut || SpotlightRules.isInDomain(item.domainIdentifier, domain) {
                    found.append(item.uniqueIdentifier)
                }
            }
            entry = try cursor.next()
        }
        return found.sorted(by: utf8Less)
    }

    /// The items expired at `now` (expiration ≤ now) in every space: space
    /// id → identifiers, sorted. Each item's space and identifier are read
    /// from the event its key names.
    func expiredIdentifiers(at now: Date, in txn: ReadTransaction) throws -> [UInt32: [String]] {
        let limit = now.eventMicroseconds
        let log = try logReader(in: txn)
        // The expired items' parts by event, so that each event is read and cut once.
        var parts: [Position: [UInt32]] = [:]
        let cursor = try byExpiration.cursor(in: txn)
        var entry = try cursor.first()
        while let (key, value) = entry {
            guard let expiration = ExpirationKey(decoding: key), let entryParts = DomainEntry.parts(value) else {
                throw PayloadError("spotlight.itemsByExpiration holds a malformed entry (\(key.count)-byte key, \(value.count)-byte value; "
                                   + "keys are 16 bytes, values u32 offsets, ascending)")
            }
            guard expiration.micros <= limit else { break }
            // An event's items of several expirations are in several entries.
            parts[expiration.position, default: []].append(contentsOf: entryParts)
            entry = try cursor.next()
        }
        var found: [UInt32: [String]] = [:]
        for (position, parts) in parts {
            let (user, items) = try Self.items(at: position, parts: parts, in: log)
            guard let space = try spaces.id(of: user, in: txn) else {
                throw PayloadError("spotlight.itemsByExpiration names an item of user \"\(user)\" at position \(position), which spaces.byName does not hold")
            }
            found[space, default: []].append(contentsOf: items.map(\.uniqueIdentifier))
        }
        return found.mapValues { $0.sorted(by: utf8Less) }
    }

    /// The user and the items that entries of the expiration or domain index
    /// name in one event, read from it (cut once): the item at byte offset
    /// `part` when the event's bytes cut into its items (as the writer cut
    /// them), else the item at index `part` (records that hold their item).
    static func items(at position: Position, parts: [UInt32], in log: LogReader) throws -> (user: String, items: [Activitylog_V1_SearchableItem]) {
        let type = SpotlightEventCatalog.itemsIndexed
        let found = try log.withPayload(at: position) { payload -> (user: String, items: [Activitylog_V1_SearchableItem]) in
            let user = try EventSpace.scanUser(payload, type: type, position: position)
            if let slices = (try? ItemSlices.slices(payload)) ?? nil {
                let byOffset = Dictionary(slices.map { ($0.lowerBound, $0) }, uniquingKeysWith: { first, _ in first })
                return (user, try parts.map { part in
                    guard let slice = byOffset[Int(part)] else {
                        throw PayloadError("the item store names no item of \(type) at position \(position) (offset \(part))")
                    }
                    let bytes = UnsafeRawBufferPointer(rebasing: payload[slice])
                    return try ItemWire.item(bytes) ?? Activitylog_V1_SearchableItem(serializedBytes: [UInt8](bytes))
                })
            }
            let event = try Activitylog_V1_SearchableItemsIndexed(serializedBytes: [UInt8](payload))
            return (user, try parts.map { part in
                guard Int(part) < event.items.count else {
                    throw PayloadError("the item store names no item of \(type) at position \(position) (index \(part))")
                }
                return event.items[Int(part)].item
            })
        }
        guard let found else {
            throw PayloadError("the item store names position \(position), which holds no payload (missing or redacted)")
        }
        return found
    }

    /// The client state of the named index of `space`, or nil.
    public func clientState(ofIndex index: String, space: UInt32, in txn: ReadTransaction) throws -> Data? {
        guard !index.isEmpty, index.utf8.count <= 507 else { return nil }
        return try clientStates.get(SpaceKey(space: space, index), in: txn).map { Data($0) }
    }

    /// Every stored client state of `space`, by index name.
    public func allClientStates(space: UInt32, in txn: ReadTransaction) throws -> [IndexClientState] {
        var result: [IndexClientState] = []
        try clientStates.forEach(inSpace: space, in: txn) { key, value in
            result.append(IndexClientState(index: String(decoding: key, as: UTF8.self), clientState: Data(value)))
            return true
        }
        return result
    }

    // MARK: Writing

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        Writer(store: self, transaction: txn, log: try logReader(in: txn))
    }

    /// The writer reads a replaced or removed item's domain
    /// in `log` (the live store's, in a rebuild's scratch environment).
    public func makeWriter(in txn: WriteTransaction, log: LogReader) throws -> any ProjectionWriter {
        Writer(store: self, transaction: txn, log: log)
    }

    /// Writes as it goes: the commands of the same batch read the item store.
    final class Writer: ProjectionWriter {
        let store: SearchableItemStore
        let txn: WriteTransaction
        let log: LogReader

        init(store: SearchableItemStore, transaction: WriteTransaction, log: LogReader) {
            self.store = store
            txn = transaction
            self.log = log
        }

        func apply(_ event: RecordedEvent) throws {
            // The domain and expiration entries the event changes, written once each when it is applied.
            var edits = EntryEdits()
            try store.apply(event, edits: &edits, in: txn, log: log)
            try store.write(edits, in: txn)
        }
    }

    /// Applies one event, reading it from its payload the one way, live and
    /// in a rebuild: an indexing event's items by a walk of its bytes
    /// without their attributes (``IndexedItemsWire``, a fifth of the
    /// decoder's instructions; every item comes with its slice, so a record
    /// never holds such an item without its attributes), any other event
    /// (or indexing bytes the walk does not take) decoded whole.
    private func apply(_ recorded: RecordedEvent, edits: inout EntryEdits, in txn: WriteTransaction, log: LogReader) throws {
        if let forgotten = try spaces.forgottenSpace(by: recorded, in: txn) {
            try removeSpace(forgotten, edits: &edits, in: txn, log: log)
            return
        }
        if let (user, items) = IndexedItemsWire.read(recorded, attributes: false) {
            let space = try spaces.appliedID(of: user, recorded, in: txn)
            try index(items.map { ($0.item, $0.slice) }, of: recorded, space: space, edits: &edits, in: txn, log: log)
            return
        }
        guard let event = try SpotlightEvent(recorded) else { return }
        let space = try spaces.appliedID(of: event.user, recorded, in: txn)
        switch event {
        case .itemsIndexed(let m):
            // The items' bytes in the event, referred to instead of copied.
            let slices = ItemSlices.find(in: recorded.payload).flatMap { $0.count == m.items.count ? $0 : nil }
            try index(m.items.enumerated().map { i, indexed in (indexed.item, slices?[i]) }, of: recorded, space: space,
                      edits: &edits, in: txn, log: log)
        case .itemsDeleted(let m):
            for id in m.removedIdentifiers { try remove(id, space: space, recorded, edits: &edits, in: txn, log: log) }
        case .domainsDeleted(let m):
            for id in m.removedIdentifiers { try remove(id, space: space, recorded, edits: &edits, in: txn, log: log) }
        case .allDeleted(let m):
            for id in m.removedIdentifiers { try remove(id, space: space, recorded, edits: &edits, in: txn, log: log) }
            for index in m.forgottenClientStateIndexes { try clientStates.delete(SpaceKey(space: space, index), in: txn) }
        case .expiredPurged(let m):
            for id in m.removedIdentifiers { try remove(id, space: space, recorded, edits: &edits, in: txn, log: log) }
        case .batchCommitted(let m):
            try clientStates.put([UInt8](m.clientState), forKey: SpaceKey(space: space, m.index), in: txn)
        }
    }

    /// Writes the records of `items`, each with where its bytes are in
    /// `recorded`'s payload when known (else the record holds the item),
    /// replacing what each identifier had; its domain and expiration entries
    /// go to `edits`.
    private func index(_ items: [(item: Activitylog_V1_SearchableItem, slice: Range<Int>?)], of recorded: RecordedEvent,
                       space: UInt32, edits: inout EntryEdits, in txn: WriteTransaction, log: LogReader) throws {
        let defaultExpiration = SpotlightRules.oneCalendarMonth(afterMicroseconds: recorded.appendedAtMicroseconds)
        for (i, (item, slice)) in items.enumerated() {
            let id = item.uniqueIdentifier
            let old = try edits.record(id, space: space, in: self, txn)
            if let old { try unindex(old, id: id, space: space, edits: &edits, in: txn, log: log) }
            // Where the item is, and nothing the log holds: the domain,
            // expiration and time are read there (version 4).
            var record = Activitylog_V1_SearchableItemRecord()
            if let slice {
                record.itemOffset = UInt32(slice.lowerBound)
                record.itemLength = UInt32(slice.count)
            } else {
                record.item = item
                record.indexedAtMicros = recorded.appendedAtMicroseconds
                record.itemOffset = UInt32(i)   // its index: its part in the domain and expiration entries
            }
            record.position = recorded.position
            // Kept only when another (0, not written, reads as `position`).
            let first = old.map { $0.firstPosition == 0 ? $0.position : $0.firstPosition } ?? recorded.position
            if first != recorded.position { record.firstPosition = first }
            // Relative to the default of the event's time: 0, not written, for most items (version 5).
            record.expirationDateMicros = item.expirationDateMicros &- defaultExpiration
            edits.records[space, default: [:]][Array(id.utf8)] = .some(try record.serializedBytes() as [UInt8])
            // This event's position is new: its entries are not stored yet.
            if item.hasDomainIdentifier {
                edits.domains[domainKey(item.domainIdentifier, position: recorded.position, space: space), default: []].append(record.itemOffset)
            }
            edits.expirations[ExpirationKey(micros: item.expirationDateMicros, position: recorded.position).encoded, default: []]
                .append(record.itemOffset)
        }
    }

    private func remove(_ id: String, space: UInt32, _ recorded: RecordedEvent, edits: inout EntryEdits,
                        in txn: WriteTransaction, log: LogReader) throws {
        guard let record = try edits.record(id, space: space, in: self, txn) else {
            throw PayloadError("\(recorded.type) at position \(recorded.position) removes item \"\(id)\", which the store does not hold")
        }
        try unindex(record, id: id, space: space, edits: &edits, in: txn, log: log)
        edits.records[space, default: [:]][Array(id.utf8)] = .some(nil)
    }

    private func domainKey(_ domain: String, position: Position, space: UInt32) -> [UInt8] {
        SpaceKey(space: space, indexing: domain, limit: Self.domainPrefixBytes, position: position).encoded
    }

    /// The key of a stored record's expiration entry: its expiration is kept
    /// relative to the default of its event's time, read from the header of
    /// that event's record (kept when a forget redacts the payload).
    private func expirationKey(_ record: Activitylog_V1_SearchableItemRecord, in log: LogReader) throws -> [UInt8] {
        guard let time = try log.payloads.appendedAtMicros(at: record.position, in: log.transaction) else {
            throw PayloadError("an item refers to position \(record.position), which the log does not hold")
        }
        let micros = record.expirationDateMicros &+ SpotlightRules.oneCalendarMonth(afterMicroseconds: time)
        return ExpirationKey(micros: micros, position: record.position).encoded
    }

    /// Everything of one space: its items (and their expiration entries,
    /// found through the records, which keep the expiration because the
    /// forget redacts the payloads in this transaction), domains and client
    /// states.
    private func removeSpace(_ space: UInt32, edits: inout EntryEdits, in txn: WriteTransaction, log: LogReader) throws {
        var stored: [(id: String, record: Activitylog_V1_SearchableItemRecord)] = []
        try forEachRecord(space: space, in: txn) { key, value in
            stored.append((String(decoding: key, as: UTF8.self), try Activitylog_V1_SearchableItemRecord(serializedBytes: Array(value))))
            return true
        }
        for (id, record) in stored {
            try edits.remove(record.itemOffset, key: expirationKey(record, in: log), of: \.expirations, stored: byExpiration, in: txn,
                             missing: "spotlight.itemsByExpiration has no entry for item \"\(id)\" of position \(record.position)")
        }
        let prefix = SpaceKey.prefix(of: space)
        edits.records[space] = nil   // a forget is an event of its own: nothing of this space is pending
        try records.database.removeAll(withPrefix: prefix, in: txn)
        try byDomain.removeAll(withPrefix: prefix, in: txn)
        try clientStates.removeAll(withPrefix: prefix, in: txn)
    }

    /// Takes a stored record's item out of its domain and expiration
    /// entries in `edits`: its item's domain is read in the log (the record
    /// keeps the expiration).
    private func unindex(_ record: Activitylog_V1_SearchableItemRecord, id: String, space: UInt32, edits: inout EntryEdits,
                         in txn: WriteTransaction, log: LogReader) throws {
        let item = try Self.item(of: record, in: log)
        if item.hasDomainIdentifier {
            try edits.remove(record.itemOffset, key: domainKey(item.domainIdentifier, position: record.position, space: space),
                             of: \.domains, stored: byDomain, in: txn,
                             missing: "spotlight.itemsByDomain has no entry for item \"\(id)\" of position \(record.position)")
        }
        try edits.remove(record.itemOffset, key: expirationKey(record, in: log), of: \.expirations, stored: byExpiration, in: txn,
                         missing: "spotlight.itemsByExpiration has no entry for item \"\(id)\" of position \(record.position)")
    }

    /// Writes the records and entries an event changed, in key order: each
    /// record page once (one ``SortedPages/apply(_:prefix:in:)`` a space),
    /// each entry once, deleted when no item is left in it.
    private func write(_ edits: EntryEdits, in txn: WriteTransaction) throws {
        for space in edits.records.keys.sorted() {
            let changes = edits.records[space]!.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { (key: $0.key, value: $0.value) }
            try records.apply(changes, prefix: SpaceKey.prefix(of: space), in: txn)
        }
        for (db, entries) in [(byDomain, edits.domains), (byExpiration, edits.expirations)] {
            for key in entries.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                let parts = entries[key, default: []]
                if parts.isEmpty { _ = try db.delete(key, in: txn) } else { try db.put(DomainEntry.encode(parts), forKey: key, in: txn) }
            }
        }
    }
}

/// The entries of the domain and expiration indexes that one event changes,
/// key → the parts left in it: read from the database at the first removal,
/// edited in memory, and written once when the event is applied (a purge's
/// or a delete's removals from one event's entry are one write, not one an
/// item).
struct EntryEdits {
    var domains: [[UInt8]: [UInt32]] = [:]
    var expirations: [[UInt8]: [UInt32]] = [:]
    /// Space → identifier → the record's new bytes, or nil when removed:
    /// written as one merge into the space's pages when the event is applied.
    var records: [UInt32: [[UInt8]: [UInt8]?]] = [:]

    /// The record of `id` as this event left it so far: its pending bytes,
    /// else the stored record.
    func record(_ id: String, space: UInt32, in store: SearchableItemStore,
                _ txn: ReadTransaction) throws -> Activitylog_V1_SearchableItemRecord? {
        if let pending = records[space]?[Array(id.utf8)] {
            return try pending.map { try Activitylog_V1_SearchableItemRecord(serializedBytes: $0) }
        }
        return try store.storedRecord(id, space: space, in: txn)
    }

    /// Takes `part` out of the entry at `key` of `entries`, read from `db`
    /// when this event has not changed it yet; `missing` is the error when
    /// the entry does not name it.
    mutating func remove(_ part: UInt32, key: [UInt8], of entries: WritableKeyPath<Self, [[UInt8]: [UInt32]]>,
                         stored db: Database<[UInt8], [UInt8]>, in txn: WriteTransaction, missing: @autoclosure () -> String) throws {
        var parts = self[keyPath: entries][key]
        if parts == nil { parts = try db.get(key, in: txn).flatMap { DomainEntry.parts($0) } }
        guard var rest = parts, let at = rest.firstIndex(of: part) else { throw PayloadError(missing()) }
        rest.remove(at: at)
        self[keyPath: entries][key] = rest
    }
}

/// The value of a `spotlight.itemsByDomain` entry: where an event's items
/// of one domain are in it, u32 big-endian each, ascending (their byte
/// offsets in the payload, or their indexes for records that hold their
/// item). `00 00 00 06 00 00 00 c4` names the items at offsets 6 and 196.
enum DomainEntry {
    static func encode(_ parts: [UInt32]) -> [UInt8] {
        var value: [UInt8] = []
        value.reserveCapacity(4 * parts.count)
        for part in parts.sorted() { BigEndian.append(part, to: &value) }
        return value
    }

    /// The parts of a stored value; nil when it is not whole u32s in ascending order.
    static func parts<C: Collection>(_ value: C) -> [UInt32]? where C.Element == UInt8 {
        let bytes = Array(value)
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return nil }
        let parts = stride(from: 0, to: bytes.count, by: 4).map { i in bytes[i..<(i + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        guard zip(parts, parts.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
        return parts
    }
}
