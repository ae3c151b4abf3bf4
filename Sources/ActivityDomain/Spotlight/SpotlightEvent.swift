import EventLog
import Foundation
import SwiftProtobuf

/// The events of Core Spotlight, as their Protocol Buffers payloads
/// (`Schema/spotlight.proto`). Past tense: each is a fact a command
/// established, with its outcome (final item states, removed identifiers),
/// so that projections apply them without deciding anything.
enum SpotlightEvent {
    case itemsIndexed(Activitylog_V1_SearchableItemsIndexed)
    case itemsDeleted(Activitylog_V1_SearchableItemsDeleted)
    case domainsDeleted(Activitylog_V1_SearchableItemsInDomainsDeleted)
    case allDeleted(Activitylog_V1_SearchableItemsAllDeleted)
    case expiredPurged(Activitylog_V1_SearchableItemsExpiredPurged)
    case batchCommitted(Activitylog_V1_IndexBatchCommitted)

    var type: String {
        switch self {
        case .itemsIndexed: SpotlightEventCatalog.itemsIndexed
        case .itemsDeleted: SpotlightEventCatalog.itemsDeleted
        case .domainsDeleted: SpotlightEventCatalog.itemsInDomainsDeleted
        case .allDeleted: SpotlightEventCatalog.allItemsDeleted
        case .expiredPurged: SpotlightEventCatalog.expiredItemsPurged
        case .batchCommitted: SpotlightEventCatalog.indexBatchCommitted
        }
    }

    var message: any SwiftProtobuf.Message {
        switch self {
        case .itemsIndexed(let m): m
        case .itemsDeleted(let m): m
        case .domainsDeleted(let m): m
        case .allDeleted(let m): m
        case .expiredPurged(let m): m
        case .batchCommitted(let m): m
        }
    }

    /// The event to append in `user`'s space, stamped with the command's time.
    func newEvent(user: String, at time: Date) throws -> NewEvent {
        try stamped(user: user).encoded(at: time)
    }

    /// The event with its user space set, as it is appended (``encoded(at:)``).
    func stamped(user: String) -> SpotlightEvent {
        switch self {
        case .itemsIndexed(var m): m.user = user; return .itemsIndexed(m)
        case .itemsDeleted(var m): m.user = user; return .itemsDeleted(m)
        case .domainsDeleted(var m): m.user = user; return .domainsDeleted(m)
        case .allDeleted(var m): m.user = user; return .allDeleted(m)
        case .expiredPurged(var m): m.user = user; return .expiredPurged(m)
        case .batchCommitted(var m): m.user = user; return .batchCommitted(m)
        }
    }

    /// The event to append, stamped with the command's time (its user already set).
    func encoded(at time: Date) throws -> NewEvent {
        // No maps in the schema: the bytes depend on the values only.
        let payload: [UInt8] = try message.serializedBytes()
        return NewEvent(type: type, schemaVersion: SpotlightEventCatalog.schemaVersion, payload: payload, at: time)
    }

    /// The Core Spotlight event a recorded event holds; nil for another
    /// domain's event. Throws for one this code cannot read (another schema
    /// version, a redacted or undecodable payload) rather than guess.
    init?(_ event: RecordedEvent) throws {
        guard SpotlightEventCatalog.types.contains(event.type) else { return nil }
        guard event.schemaVersion >= 1, event.schemaVersion <= SpotlightEventCatalog.schemaVersion else {
            throw PayloadError("\(event.type) at position \(event.position) has schema version \(event.schemaVersion); this code reads versions 1 to \(SpotlightEventCatalog.schemaVersion)")
        }
        // A forgotten user's event (see ActivityEvent.init): skipped.
        if event.isRedacted && event.redactedBy != nil { return nil }
        guard !event.isRedacted else {
            throw PayloadError("\(event.type) at position \(event.position) is redacted; Core Spotlight events cannot be replayed without their payload")
        }
        let bytes = event.payload
        switch event.type {
        case SpotlightEventCatalog.itemsIndexed: self = .itemsIndexed(try .init(serializedBytes: bytes))
        case SpotlightEventCatalog.itemsDeleted: self = .itemsDeleted(try .init(serializedBytes: bytes))
        case SpotlightEventCatalog.itemsInDomainsDeleted: self = .domainsDeleted(try .init(serializedBytes: bytes))
        case SpotlightEventCatalog.allItemsDeleted: self = .allDeleted(try .init(serializedBytes: bytes))
        case SpotlightEventCatalog.expiredItemsPurged: self = .expiredPurged(try .init(serializedBytes: bytes))
        case SpotlightEventCatalog.indexBatchCommitted: self = .batchCommitted(try .init(serializedBytes: bytes))
        default: return nil
        }
    }

    /// The user space the event acts in (version 1 events: the default space, as their `user` is empty).
    var user: String {
        switch self {
        case .itemsIndexed(let m): m.user
        case .itemsDeleted(let m): m.user
        case .domainsDeleted(let m): m.user
        case .allDeleted(let m): m.user
        case .expiredPurged(let m): m.user
        case .batchCommitted(let m): m.user
        }
    }
}
