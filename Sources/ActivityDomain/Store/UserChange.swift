import EventLog
import Foundation
import LMDB
import TextIndex
import SwiftProtobuf

/// One event of a user's space, decoded: what a change feed
/// (``UserScoped/changes(from:options:)``) yields.
///
/// ```swift
/// for try await change in store.user("alice").changes(from: 1) {
///     if case .becameCurrent(let activity, let device, _) = change.change { offerHandoff(activity, from: device) }
/// }
/// ```
///
/// Its JSON is the line `eventlog log --json` prints for the event:
/// `{"position","type","version","at","event"}`, `event` being the payload
/// as Protocol Buffers' canonical JSON (`Docs/LogFormat.md`).
public struct UserChange: Sendable, Hashable {
    /// The event's position in the log.
    public var position: Position
    /// The event type, e.g. `activity.becameCurrent`.
    public var type: String
    /// The payload's schema version.
    public var schemaVersion: UInt32
    /// When it was appended.
    public var at: Date
    /// What happened.
    public var change: Change
    /// The payload as the log holds it (its JSON is ``json``'s `event`).
    let payload: [UInt8]

    /// What an event of a user's space says happened, with the names of
    /// `Docs/Semantics.md`.
    public enum Change: Sendable, Hashable {
        /// `activity.created`: the activity as created (inactive).
        case activityCreated(UserActivity)
        /// `activity.updated`: the activity after the update, and the properties it changed.
        case activityUpdated(UserActivity, changedProperties: [String])
        /// `activity.userInfoEntriesAdded`: entries merged into `userInfo`.
        case userInfoEntriesAdded(activity: String, entries: [Name: UserInfoValue], replacedKeys: [String])
        /// `activity.becameCurrent` on `device`, superseding the activity that was current there.
        case becameCurrent(activity: String, device: String, superseded: String?)
        /// `activity.resignedCurrent`.
        case resignedCurrent(activity: String, device: String)
        /// `activity.invalidated`; `wasCurrent` when it left its device's current slot.
        case invalidated(activity: String, device: String, wasCurrent: Bool)
        /// `activity.saved`: the copy written under `key`.
        case activitySaved(key: String, activity: UserActivity, replacedActivity: String?)
        /// `savedActivities.deleted`.
        case savedActivitiesDeleted(persistentIdentifiers: [String], removedKeys: [String])
        /// `savedActivities.allDeleted`.
        case allSavedActivitiesDeleted(removedKeys: [String])
        /// `searchableItems.indexed`: each item in its final state; updates that named no item.
        case itemsIndexed([SearchableItem], droppedUpdates: [String])
        /// `searchableItems.deleted`.
        case itemsDeleted(identifiers: [String], removedIdentifiers: [String])
        /// `searchableItems.domainsDeleted`.
        case itemsInDomainsDeleted(domains: [String], removedIdentifiers: [String])
        /// `searchableItems.allDeleted` (client states forgotten too).
        case allItemsDeleted(removedIdentifiers: [String])
        /// `searchableItems.expiredPurged`: the items expired at `now`.
        case expiredItemsPurged(now: Date, removedIdentifiers: [String])
        /// `searchableIndex.batchCommitted`: the batch of `index` stored `clientState`.
        case indexBatchCommitted(index: String, clientState: Data)
    }

    /// The change `event` records; nil for an event of no user space (the
    /// store-wide `activityTypes.declared`, another domain's, a forgotten
    /// user's redacted event). Throws for an event of this domain that does
    /// not decode.
    init?(_ event: RecordedEvent) throws {
        let change: Change
        if let activityEvent = try ActivityEvent(event) {
            guard let decoded = try Change(activityEvent) else { return nil }
            change = decoded
        } else if let spotlightEvent = try SpotlightEvent(event) {
            guard let decoded = try Change(spotlightEvent) else { return nil }
            change = decoded
        } else {
            return nil
        }
        position = event.position
        type = event.type
        schemaVersion = event.schemaVersion
        at = event.appendedAt
        self.change = change
        payload = event.payload
    }

    /// The event it was decoded from.
    var event: RecordedEvent {
        RecordedEvent(position: position, type: type, schemaVersion: schemaVersion, appendedAt: at, payload: payload)
    }
}

extension UserChange.Change {
    init?(_ event: ActivityEvent) throws {
        switch event {
        case .typesDeclared:
            return nil
        case .created(let m):
            self = .activityCreated(try UserActivity(proto: m.activity))
        case .updated(let m):
            self = .activityUpdated(try UserActivity(proto: m.activity), changedProperties: m.changedProperties)
        case .userInfoEntriesAdded(let m):
            self = .userInfoEntriesAdded(activity: m.activity, entries: try UserInfoValue.dictionary(from: m.entries),
                                         replacedKeys: m.replacedKeys)
        case .becameCurrent(let m):
            self = .becameCurrent(activity: m.activity, device: m.device, superseded: m.hasSuperseded ? m.superseded : nil)
        case .resignedCurrent(let m):
            self = .resignedCurrent(activity: m.activity, device: m.device)
        case .invalidated(let m):
            self = .invalidated(activity: m.activity, device: m.device, wasCurrent: m.wasCurrent)
        case .saved(let m):
            self = .activitySaved(key: m.key, activity: try UserActivity(proto: m.copy),
                                  replacedActivity: m.hasReplacedActivity ? m.replacedActivity : nil)
        case .savedDeleted(let m):
            self = .savedActivitiesDeleted(persistentIdentifiers: m.persistentIdentifiers, removedKeys: m.removedKeys)
        case .savedAllDeleted(let m):
            self = .allSavedActivitiesDeleted(removedKeys: m.removedKeys)
        }
    }

    init?(_ event: SpotlightEvent) throws {
        switch event {
        case .itemsIndexed(let m):
            self = .itemsIndexed(m.items.map { SearchableItem(proto: $0.item) }, droppedUpdates: m.droppedUpdates)
        case .itemsDeleted(let m):
            self = .itemsDeleted(identifiers: m.identifiers, removedIdentifiers: m.removedIdentifiers)
        case .domainsDeleted(let m):
            self = .itemsInDomainsDeleted(domains: m.domainIdentifiers, removedIdentifiers: m.removedIdentifiers)
        case .allDeleted(let m):
            self = .allItemsDeleted(removedIdentifiers: m.removedIdentifiers)
        case .expiredPurged(let m):
            self = .expiredItemsPurged(now: Date(microseconds: m.nowMicros), removedIdentifiers: m.removedIdentifiers)
        case .batchCommitted(let m):
            self = .indexBatchCommitted(index: m.index, clientState: m.clientState)
        }
    }
}

extension UserChange: JSONRepresentable {
    /// `{"position","type","version","at","event"}`: the line of
    /// `eventlog log --json` (``ActivityEventCatalog/logJSON(of:)``).
    public var json: JSONValue {
        // The payload decoded once already (``init(_:)``): encoding it again cannot fail.
        (try? ActivityEventCatalog.logJSON(of: event)) ?? .object([("position", .integer(Int64(position))), ("type", .string(type))])
    }

    public init(json: JSONValue) throws {
        func fail(_ field: String, _ allowed: String) -> ActivityError {
            ActivityError(.invalidValue, operation: "decode UserChange", field: field, value: json[field]?.serialized() ?? "missing", allowed: allowed)
        }
        guard case .integer(let position)? = json["position"], position > 0 else { throw fail("position", "a position, 1 or more") }
        guard case .string(let type)? = json["type"] else { throw fail("type", "an event type") }
        guard case .integer(let version)? = json["version"], let schemaVersion = UInt32(exactly: version) else {
            throw fail("version", "a schema version")
        }
        guard case .string(let atText)? = json["at"], let at = ISO8601Time.date(from: atText) else { throw fail("at", "an ISO-8601 time") }
        guard let event = json["event"], case .object = event else { throw fail("event", "the payload as an object") }
        let payload: [UInt8]
        do {
            guard let messageType = Self.messageType(of: type) else { throw fail("type", "an event type of a user space") }
            payload = try messageType.init(jsonString: event.serialized()).serializedBytes()
        } catch let error as ActivityError {
            throw error
        } catch {
            throw ActivityError(.invalidValue, operation: "decode UserChange", field: "event", value: event.serialized(),
                                allowed: "the \(type) payload as Protocol Buffers' canonical JSON (\(error))")
        }
        let recorded = RecordedEvent(position: Position(position), type: type, schemaVersion: schemaVersion, appendedAt: at, payload: payload)
        guard let change = try UserChange(recorded) else { throw fail("type", "an event type of a user space") }
        self = change
    }

    /// The message of each event type a user's space records.
    private static func messageType(of type: String) -> (any SwiftProtobuf.Message.Type)? {
        switch type {
        case ActivityEventCatalog.activityCreated: Activitylog_V1_ActivityCreated.self
        case ActivityEventCatalog.activityUpdated: Activitylog_V1_ActivityUpdated.self
        case ActivityEventCatalog.activityUserInfoEntriesAdded: Activitylog_V1_ActivityUserInfoEntriesAdded.self
        case ActivityEventCatalog.activityBecameCurrent: Activitylog_V1_ActivityBecameCurrent.self
        case ActivityEventCatalog.activityResignedCurrent: Activitylog_V1_ActivityResignedCurrent.self
        case ActivityEventCatalog.activityInvalidated: Activitylog_V1_ActivityInvalidated.self
        case ActivityEventCatalog.activitySaved: Activitylog_V1_ActivitySaved.self
        case ActivityEventCatalog.savedActivitiesDeleted: Activitylog_V1_SavedActivitiesDeleted.self
        case ActivityEventCatalog.savedActivitiesAllDeleted: Activitylog_V1_SavedActivitiesAllDeleted.self
        case SpotlightEventCatalog.itemsIndexed: Activitylog_V1_SearchableItemsIndexed.self
        case SpotlightEventCatalog.itemsDeleted: Activitylog_V1_SearchableItemsDeleted.self
        case SpotlightEventCatalog.itemsInDomainsDeleted: Activitylog_V1_SearchableItemsInDomainsDeleted.self
        case SpotlightEventCatalog.allItemsDeleted: Activitylog_V1_SearchableItemsAllDeleted.self
        case SpotlightEventCatalog.expiredItemsPurged: Activitylog_V1_SearchableItemsExpiredPurged.self
        case SpotlightEventCatalog.indexBatchCommitted: Activitylog_V1_IndexBatchCommitted.self
        default: nil
        }
    }
}
