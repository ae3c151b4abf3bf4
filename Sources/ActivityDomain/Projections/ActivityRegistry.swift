import EventLog
import Foundation
import LMDB

/// The projection the rules read: every activity with its state and
/// properties, and the declared activity types.
///
/// Databases: `activity.registry.activities` (space id and activity id →
/// `ActivityRecord` message: ids are unique within a user space),
/// `activity.registry.types` (type → position that declared it; store-wide).
///
/// ```swift
/// let record = try store.read { txn in try store.views.registry.record("a1", space: 0, in: txn) }
/// ```
public struct ActivityRegistry: Projection {
    public var name: String { "activity.registry" }
    public var version: UInt32 { 2 }
    public var databaseNames: [String] { ["activity.registry.activities", "activity.registry.types"] }

    let activities: Database<SpaceKey, [UInt8]>
    let types: Database<String, UInt64>
    let spaces: SpaceDirectory

    public init(openingIn txn: WriteTransaction, spaces: SpaceDirectory) throws {
        self.spaces = spaces
        activities = try txn.createDatabase("activity.registry.activities")
        types = try txn.createDatabase("activity.registry.types")
    }

    // MARK: Reading

    /// The activity with id `id` in `space`, or nil.
    public func record(_ id: String, space: UInt32, in txn: ReadTransaction) throws -> ActivityRecord? {
        try rawRecord(id, space: space, in: txn).map(ActivityRecord.init(proto:))
    }

    func rawRecord(_ id: String, space: UInt32, in txn: ReadTransaction) throws -> Activitylog_V1_ActivityRecord? {
        guard !id.isEmpty, id.utf8.count <= 507 else { return nil }
        return try activities.message(SpaceKey(space: space, id), in: txn)
    }

    /// Every activity of `space`, by id (UTF-8 byte order).
    public func allRecords(space: UInt32, in txn: ReadTransaction) throws -> [ActivityRecord] {
        var result: [ActivityRecord] = []
        try activities.forEach(inSpace: space, in: txn) { _, value in
            result.append(try ActivityRecord(proto: Activitylog_V1_ActivityRecord(serializedBytes: [UInt8](value))))
            return true
        }
        return result
    }

    /// How many activities `space` holds, invalidated ones included.
    public func count(space: UInt32, in txn: ReadTransaction) throws -> Int {
        try activities.count(inSpace: space, in: txn)
    }

    /// Whether `type` was declared.
    public func isDeclared(_ type: String, in txn: ReadTransaction) throws -> Bool {
        guard !type.isEmpty, type.utf8.count <= 511 else { return false }
        return try types.contains(type, in: txn)
    }

    /// The declared types, sorted by UTF-8 bytes.
    public func declaredTypes(in txn: ReadTransaction) throws -> [String] {
        var result: [String] = []
        let cursor = try types.cursor(in: txn)
        var entry = try cursor.first()
        while let (key, _) = entry {
            result.append(key)
            entry = try cursor.next()
        }
        return result
    }

    // MARK: Writing

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in try apply(event, in: txn) }
    }

    private func apply(_ recorded: RecordedEvent, in txn: WriteTransaction) throws {
        if let forgotten = try spaces.forgottenSpace(by: recorded, in: txn) {
            try activities.removeAll(withPrefix: SpaceKey.prefix(of: forgotten), in: txn)
            return
        }
        guard let event = try ActivityEvent(recorded) else { return }
        let position = recorded.position
        let space = try event.user.map { try spaces.appliedID(of: $0, recorded, in: txn) } ?? SpaceDirectory.none
        switch event {
        case .typesDeclared(let m):
            for type in m.types {
                if try !types.contains(type, in: txn) { try types.put(position, forKey: type, in: txn) }
            }
        case .created(let m):
            var record = Activitylog_V1_ActivityRecord()
            record.activity = m.activity
            record.state = .inactive
            record.createdPosition = position
            record.createdAtMicros = recorded.appendedAtMicroseconds
            record.lastPosition = position
            try activities.put(message: record, forKey: SpaceKey(space: space, m.activity.activity), in: txn)
        case .updated(let m):
            try modify(space, m.activity.activity, at: position, in: txn) { $0.activity = m.activity }
        case .userInfoEntriesAdded(let m):
            try modify(space, m.activity, at: position, in: txn) { record in
                record.activity.userInfo = Self.merged(record.activity.userInfo, m.entries)
            }
        case .becameCurrent(let m):
            if m.hasSuperseded {
                try modify(space, m.superseded, at: position, in: txn) { $0.state = .inactive }
            }
            try modify(space, m.activity, at: position, in: txn) { record in
                record.state = .current
                record.becameCurrentAtMicros = recorded.appendedAtMicroseconds
            }
        case .resignedCurrent(let m):
            try modify(space, m.activity, at: position, in: txn) { $0.state = .inactive }
        case .invalidated(let m):
            try modify(space, m.activity, at: position, in: txn) { $0.state = .invalidated }
        case .saved, .savedDeleted, .savedAllDeleted:
            break
        }
    }

    private func modify(_ space: UInt32, _ id: String, at position: Position, in txn: WriteTransaction,
                        _ change: (inout Activitylog_V1_ActivityRecord) -> Void) throws {
        guard var record = try rawRecord(id, space: space, in: txn) else {
            throw PayloadError("the log names activity \"\(id)\" at position \(position), which the registry does not hold")
        }
        change(&record)
        record.lastPosition = position
        try activities.put(message: record, forKey: SpaceKey(space: space, id), in: txn)
    }

    /// `base` with `entries` merged in (an entry replaces a value of the same
    /// key), sorted by key: the stored order.
    static func merged(_ base: Activitylog_V1_UserInfoDictionary,
                       _ entries: Activitylog_V1_UserInfoDictionary) -> Activitylog_V1_UserInfoDictionary {
        var byKey: [Name: Activitylog_V1_UserInfoValue] = [:]
        for entry in base.entries { byKey[Name(entry.key)] = entry.value }
        for entry in entries.entries { byKey[Name(entry.key)] = entry.value }
        var result = Activitylog_V1_UserInfoDictionary()
        result.entries = byKey.keys.sorted().map { key in
            var entry = Activitylog_V1_UserInfoEntry()
            entry.key = key.string
            entry.value = byKey[key]!
            return entry
        }
        return result
    }
}
