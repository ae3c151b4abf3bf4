import EventLog
import Foundation
import LMDB

/// The item store: every searchable item by identifier, by domain and by
/// expiration, and the client state of each named index. Core Spotlight's
/// index is write-only; this one can be listed.
///
/// Databases:
/// - `spotlight.items`: uniqueIdentifier → `SearchableItemRecord` message.
/// - `spotlight.itemsByDomain`: first 250 UTF-8 bytes of the domain, 0x00,
///   identifier → empty. A domain and its subdomains share a key prefix, so a
///   recursive listing is one cursor range; the component boundary is
///   checked on the key (or, for a cut domain, the record).
/// - `spotlight.itemsByExpiration`: expiration (µs since 1970, sign bit
///   flipped, big-endian: byte order is time order), identifier → empty;
///   what `purgeExpired` scans.
/// - `spotlight.clientStates`: index name → client state bytes.
///
/// ```swift
/// let items = try store.read { txn in try store.views.items.items(inDomain: "orders", in: txn) }
/// ```
public struct SearchableItemStore: Projection {
    public var name: String { "spotlight.items" }
    public var version: UInt32 { 1 }
    public var databaseNames: [String] {
        ["spotlight.items", "spotlight.itemsByDomain", "spotlight.itemsByExpiration", "spotlight.clientStates"]
    }

    let records: Database<String, [UInt8]>
    let byDomain: Database<[UInt8], [UInt8]>
    let byExpiration: Database<[UInt8], [UInt8]>
    let clientStates: Database<String, [UInt8]>

    static let domainPrefixBytes = 250

    public init(openingIn txn: WriteTransaction) throws {
        records = try txn.createDatabase("spotlight.items")
        byDomain = try txn.createDatabase("spotlight.itemsByDomain")
        byExpiration = try txn.createDatabase("spotlight.itemsByExpiration")
        clientStates = try txn.createDatabase("spotlight.clientStates")
    }

    // MARK: Reading

    func rawRecord(_ id: String, in txn: ReadTransaction) throws -> Activitylog_V1_SearchableItemRecord? {
        guard !id.isEmpty, id.utf8.count <= 511 else { return nil }
        return try records.message(id, in: txn)
    }

    /// The item with this identifier, or nil.
    public func item(_ id: String, in txn: ReadTransaction) throws -> IndexedItem? {
        try rawRecord(id, in: txn).map(IndexedItem.init(proto:))
    }

    /// Every item, by identifier (UTF-8 byte order), expired ones included
    /// until they are purged.
    public func all(in txn: ReadTransaction) throws -> [IndexedItem] {
        var result: [IndexedItem] = []
        let cursor = try records.cursor(in: txn)
        var entry = try cursor.first()
        while let (_, value) = entry {
            result.append(IndexedItem(proto: try Activitylog_V1_SearchableItemRecord(serializedBytes: value)))
            entry = try cursor.next()
        }
        return result
    }

    /// Every identifier, sorted.
    func allIdentifiers(in txn: ReadTransaction) throws -> [String] {
        var result: [String] = []
        let cursor = try records.cursor(in: txn)
        var entry = try cursor.firstBytes()
        while let e = entry {
            result.append(String(decoding: e.key, as: UTF8.self))
            entry = try cursor.nextBytes()
        }
        return result
    }

    /// The items in `domain` or below it (`orders` lists `orders` and
    /// `orders.2024`, not `orders2024`), by identifier.
    public func items(inDomain domain: String, in txn: ReadTransaction) throws -> [IndexedItem] {
        try identifiers(inDomain: domain, in: txn).compactMap { try item($0, in: txn) }
    }

    /// The identifiers of the items in `domain` or below it, sorted.
    func identifiers(inDomain domain: String, in txn: ReadTransaction) throws -> [String] {
        guard !domain.isEmpty else { return [] }
        let prefix = keyPrefix(domain, limit: Self.domainPrefixBytes)
        var found: [String] = []
        let cursor = try byDomain.cursor(in: txn)
        var entry = try cursor.seek(atOrAfter: prefix)
        while let (key, _) = entry, key.starts(with: prefix) {
            // Domains hold no NUL (checked by the rules), so the first 0x00 ends the domain part.
            if let split = key.firstIndex(of: 0) {
                let id = String(decoding: key[(split + 1)...], as: UTF8.self)
                if split < Self.domainPrefixBytes {
                    if SpotlightRules.isInDomain(String(decoding: key[..<split], as: UTF8.self), domain) { found.append(id) }
                } else if let record = try rawRecord(id, in: txn), SpotlightRules.isInDomain(record.item.domainIdentifier, domain) {
                    found.append(id)
                }
            }
            entry = try cursor.next()
        }
        return found.sorted(by: utf8Less)
    }

    /// The identifiers of the items expired at `now` (expiration ≤ now), sorted.
    func expiredIdentifiers(at now: Date, in txn: ReadTransaction) throws -> [String] {
        let limit = Self.timeKey(now.eventMicroseconds)
        var found: [String] = []
        let cursor = try byExpiration.cursor(in: txn)
        var entry = try cursor.first()
        while let (key, _) = entry, key.count > 8, key[0..<8].lexicographicallyPrecedes(limit) || key[0..<8].elementsEqual(limit) {
            found.append(String(decoding: key[8...], as: UTF8.self))
            entry = try cursor.next()
        }
        return found.sorted(by: utf8Less)
    }

    /// The client state of the named index, or nil.
    public func clientState(ofIndex index: String, in txn: ReadTransaction) throws -> Data? {
        guard !index.isEmpty, index.utf8.count <= 511 else { return nil }
        return try clientStates.get(index, in: txn).map { Data($0) }
    }

    /// Every stored client state, by index name.
    public func allClientStates(in txn: ReadTransaction) throws -> [IndexClientState] {
        var result: [IndexClientState] = []
        let cursor = try clientStates.cursor(in: txn)
        var entry = try cursor.first()
        while let (key, value) = entry {
            result.append(IndexClientState(index: key, clientState: Data(value)))
            entry = try cursor.next()
        }
        return result
    }

    // MARK: Writing

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        // Writes as it goes: the commands of the same batch read the item store.
        ClosureProjectionWriter { event in try apply(event, in: txn) }
    }

    private func apply(_ recorded: RecordedEvent, in txn: WriteTransaction) throws {
        guard let event = try SpotlightEvent(recorded) else { return }
        switch event {
        case .itemsIndexed(let m):
            for indexed in m.items {
                let id = indexed.item.uniqueIdentifier
                let old = try rawRecord(id, in: txn)
                if let old { try unindex(old.item, in: txn) }
                var record = Activitylog_V1_SearchableItemRecord()
                record.item = indexed.item
                record.position = recorded.position
                record.indexedAtMicros = recorded.appendedAtMicroseconds
                record.firstPosition = old?.firstPosition ?? recorded.position
                try records.put(message: record, forKey: id, in: txn)
                try index(indexed.item, in: txn)
            }
        case .itemsDeleted(let m):
            for id in m.removedIdentifiers { try remove(id, recorded, in: txn) }
        case .domainsDeleted(let m):
            for id in m.removedIdentifiers { try remove(id, recorded, in: txn) }
        case .allDeleted(let m):
            for id in m.removedIdentifiers { try remove(id, recorded, in: txn) }
            for index in m.forgottenClientStateIndexes { try clientStates.delete(index, in: txn) }
        case .expiredPurged(let m):
            for id in m.removedIdentifiers { try remove(id, recorded, in: txn) }
        case .batchCommitted(let m):
            try clientStates.put([UInt8](m.clientState), forKey: m.index, in: txn)
        }
    }

    private func remove(_ id: String, _ recorded: RecordedEvent, in txn: WriteTransaction) throws {
        guard let record = try rawRecord(id, in: txn) else {
            throw PayloadError("\(recorded.type) at position \(recorded.position) removes item \"\(id)\", which the store does not hold")
        }
        try unindex(record.item, in: txn)
        try records.delete(id, in: txn)
    }

    static func timeKey(_ micros: Int64) -> [UInt8] {
        withUnsafeBytes(of: (UInt64(bitPattern: micros) ^ (1 << 63)).bigEndian) { Array($0) }
    }

    private func domainKey(_ domain: String, id: String) -> [UInt8] {
        keyPrefix(domain, limit: Self.domainPrefixBytes) + [0] + Array(id.utf8)
    }

    private func expirationKey(_ item: Activitylog_V1_SearchableItem) -> [UInt8] {
        Self.timeKey(item.expirationDateMicros) + Array(item.uniqueIdentifier.utf8)
    }

    private func index(_ item: Activitylog_V1_SearchableItem, in txn: WriteTransaction) throws {
        if item.hasDomainIdentifier { try byDomain.put([], forKey: domainKey(item.domainIdentifier, id: item.uniqueIdentifier), in: txn) }
        try byExpiration.put([], forKey: expirationKey(item), in: txn)
    }

    private func unindex(_ item: Activitylog_V1_SearchableItem, in txn: WriteTransaction) throws {
        if item.hasDomainIdentifier { try byDomain.delete(domainKey(item.domainIdentifier, id: item.uniqueIdentifier), in: txn) }
        try byExpiration.delete(expirationKey(item), in: txn)
    }
}
