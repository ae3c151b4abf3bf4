import EventLog
import Foundation
import SwiftProtobuf

/// The events of the activity domain, as their Protocol Buffers payloads.
/// Past tense: each is a fact the command established. The type strings and
/// schema versions are the log's; ``ActivityEventCatalog`` lists them.
enum ActivityEvent {
    case typesDeclared(Activitylog_V1_ActivityTypesDeclared)
    case created(Activitylog_V1_ActivityCreated)
    case updated(Activitylog_V1_ActivityUpdated)
    case userInfoEntriesAdded(Activitylog_V1_ActivityUserInfoEntriesAdded)
    case becameCurrent(Activitylog_V1_ActivityBecameCurrent)
    case resignedCurrent(Activitylog_V1_ActivityResignedCurrent)
    case invalidated(Activitylog_V1_ActivityInvalidated)
    case saved(Activitylog_V1_ActivitySaved)
    case savedDeleted(Activitylog_V1_SavedActivitiesDeleted)
    case savedAllDeleted(Activitylog_V1_SavedActivitiesAllDeleted)

    var type: String {
        switch self {
        case .typesDeclared: ActivityEventCatalog.activityTypesDeclared
        case .created: ActivityEventCatalog.activityCreated
        case .updated: ActivityEventCatalog.activityUpdated
        case .userInfoEntriesAdded: ActivityEventCatalog.activityUserInfoEntriesAdded
        case .becameCurrent: ActivityEventCatalog.activityBecameCurrent
        case .resignedCurrent: ActivityEventCatalog.activityResignedCurrent
        case .invalidated: ActivityEventCatalog.activityInvalidated
        case .saved: ActivityEventCatalog.activitySaved
        case .savedDeleted: ActivityEventCatalog.savedActivitiesDeleted
        case .savedAllDeleted: ActivityEventCatalog.savedActivitiesAllDeleted
        }
    }

    var message: any SwiftProtobuf.Message {
        switch self {
        case .typesDeclared(let m): m
        case .created(let m): m
        case .updated(let m): m
        case .userInfoEntriesAdded(let m): m
        case .becameCurrent(let m): m
        case .resignedCurrent(let m): m
        case .invalidated(let m): m
        case .saved(let m): m
        case .savedDeleted(let m): m
        case .savedAllDeleted(let m): m
        }
    }

    /// The event to append in `user`'s space, stamped with the command's time.
    func newEvent(user: String, at time: Date) throws -> NewEvent {
        var event = self
        event.setUser(user)
        return try event.encoded(at: time)
    }

    private mutating func setUser(_ user: String) {
        switch self {
        case .typesDeclared: break
        case .created(var m): m.user = user; self = .created(m)
        case .updated(var m): m.user = user; self = .updated(m)
        case .userInfoEntriesAdded(var m): m.user = user; self = .userInfoEntriesAdded(m)
        case .becameCurrent(var m): m.user = user; self = .becameCurrent(m)
        case .resignedCurrent(var m): m.user = user; self = .resignedCurrent(m)
        case .invalidated(var m): m.user = user; self = .invalidated(m)
        case .saved(var m): m.user = user; self = .saved(m)
        case .savedDeleted(var m): m.user = user; self = .savedDeleted(m)
        case .savedAllDeleted(var m): m.user = user; self = .savedAllDeleted(m)
        }
    }

    private func encoded(at time: Date) throws -> NewEvent {
        // Deterministic serialization: the schema has no maps, so the bytes
        // depend on the values only.
        let payload: [UInt8] = try message.serializedBytes()
        return NewEvent(type: type, schemaVersion: ActivityEventCatalog.schemaVersion(of: type), payload: payload, at: time)
    }

    /// The activity event a recorded event holds; nil when the event is of
    /// another domain. Throws when it is an activity event this code cannot
    /// read (unknown schema version, undecodable payload).
    init?(_ event: RecordedEvent) throws {
        guard ActivityEventCatalog.types.contains(event.type) else { return nil }
        guard event.schemaVersion >= 1, event.schemaVersion <= ActivityEventCatalog.schemaVersion(of: event.type) else {
            throw PayloadError("\(event.type) at position \(event.position) has schema version \(event.schemaVersion); this code reads versions 1 to \(ActivityEventCatalog.schemaVersion(of: event.type))")
        }
        // A redacted event that a redaction record authorized is a forgotten
        // user's: its data left every view with that record. Skip it.
        if event.isRedacted && event.redactedBy != nil { return nil }
        guard !event.isRedacted else {
            throw PayloadError("\(event.type) at position \(event.position) is redacted; activity events cannot be replayed without their payload")
        }
        let bytes = event.payload
        switch event.type {
        case ActivityEventCatalog.activityTypesDeclared: self = .typesDeclared(try .init(serializedBytes: bytes))
        case ActivityEventCatalog.activityCreated: self = .created(try .init(serializedBytes: bytes))
        case ActivityEventCatalog.activityUpdated: self = .updated(try .init(serializedBytes: bytes))
        case ActivityEventCatalog.activityUserInfoEntriesAdded: self = .userInfoEntriesAdded(try .init(serializedBytes: bytes))
        case ActivityEventCatalog.activityBecameCurrent: self = .becameCurrent(try .init(serializedBytes: bytes))
        case ActivityEventCatalog.activityResignedCurrent: self = .resignedCurrent(try .init(serializedBytes: bytes))
        case ActivityEventCatalog.activityInvalidated: self = .invalidated(try .init(serializedBytes: bytes))
        case ActivityEventCatalog.activitySaved: self = .saved(try .init(serializedBytes: bytes))
        case ActivityEventCatalog.savedActivitiesDeleted: self = .savedDeleted(try .init(serializedBytes: bytes))
        case ActivityEventCatalog.savedActivitiesAllDeleted: self = .savedAllDeleted(try .init(serializedBytes: bytes))
        default: return nil
        }
        if event.schemaVersion == 1 { self.upgradeFromVersion1() }
    }

    /// Version 1 had no spaces: its events belong to the default space, so
    /// the `user` an activity carried then (an attribute, not a space) is
    /// dropped. The space of a version-2 event is its `user` field.
    private mutating func upgradeFromVersion1() {
        switch self {
        case .created(var m): m.activity.clearUser(); self = .created(m)
        case .updated(var m): m.activity.clearUser(); self = .updated(m)
        case .saved(var m): m.copy.clearUser(); self = .saved(m)
        case .becameCurrent(var m): m.clearV1Owner(); self = .becameCurrent(m)
        default: break
        }
    }

    /// The user space the event acts in; nil for the store-wide `activityTypes.declared`.
    var user: String? {
        switch self {
        case .typesDeclared: nil
        case .created(let m): m.user
        case .updated(let m): m.user
        case .userInfoEntriesAdded(let m): m.user
        case .becameCurrent(let m): m.user
        case .resignedCurrent(let m): m.user
        case .invalidated(let m): m.user
        case .saved(let m): m.user
        case .savedDeleted(let m): m.user
        case .savedAllDeleted(let m): m.user
        }
    }
}
