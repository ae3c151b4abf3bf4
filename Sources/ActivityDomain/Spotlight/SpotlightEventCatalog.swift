import EventLog
import Foundation

/// The event types Core Spotlight appends, their schema version, and a
/// decoder for tools (`eventlog log --json`, `eventlog verify`).
///
/// ```swift
/// for event in try store.eventStore.events(from: 1) {
///     if let json = try SpotlightEventCatalog.json(of: event) { print(event.type, json) }
/// }
/// ```
///
/// `Docs/Semantics.md` ("Core Spotlight") describes each event's fields.
public enum SpotlightEventCatalog {
    public static let itemsIndexed = "searchableItems.indexed"
    public static let itemsDeleted = "searchableItems.deleted"
    public static let itemsInDomainsDeleted = "searchableItems.domainsDeleted"
    public static let allItemsDeleted = "searchableItems.allDeleted"
    public static let expiredItemsPurged = "searchableItems.expiredPurged"
    public static let indexBatchCommitted = "searchableIndex.batchCommitted"

    /// Every event type of Core Spotlight.
    public static let types: Set<String> = [
        itemsIndexed, itemsDeleted, itemsInDomainsDeleted, allItemsDeleted, expiredItemsPurged, indexBatchCommitted,
    ]

    /// The schema version every Core Spotlight event is written with: 2,
    /// which added the user space (`user`, field 15). Version 1 events are
    /// read as events of the default space.
    public static let schemaVersion: UInt32 = 2

    /// The payload as Protocol Buffers' canonical JSON; nil for an event of
    /// another domain. Throws when the payload does not decode.
    public static func json(of event: RecordedEvent) throws -> String? {
        guard let decoded = try SpotlightEvent(event) else { return nil }
        return try decoded.message.jsonString()
    }

    /// Throws when `event` is a Core Spotlight event whose payload does not
    /// decode: a `payloadCheck` for ``EventLog/EventStore/verify(payloadCheck:progress:)``.
    public static func checkPayload(_ event: RecordedEvent) throws {
        // Bytes the walk takes decode whole, to what it reads (``IndexedItemsWire``):
        // checked so, they are not decoded twice nor their attributes made into strings.
        if IndexedItemsWire.read(event, attributes: false) != nil { return }
        _ = try SpotlightEvent(event)
    }
}
