import EventLog
import Foundation
import LMDB

/// The current-activity view: at most one current activity per device, and
/// when it became current.
///
/// Database: `activity.current` (device → `CurrentEntry` message). The
/// activity's properties are read from the registry, so that they are never
/// stored twice.
public struct CurrentActivityView: Projection {
    public var name: String { "activity.current" }
    public var version: UInt32 { 1 }
    public var databaseNames: [String] { ["activity.current"] }

    let current: Database<String, [UInt8]>

    public init(openingIn txn: WriteTransaction) throws {
        current = try txn.createDatabase("activity.current")
    }

    // MARK: Reading

    /// The id of the activity current on `device` and its entry, or nil.
    func entry(onDevice device: String, in txn: ReadTransaction) throws -> Activitylog_V1_CurrentEntry? {
        guard !device.isEmpty, device.utf8.count <= 511 else { return nil }
        return try current.message(device, in: txn)
    }

    /// The activity current on `device`, with its properties from `registry`.
    public func activity(onDevice device: String, registry: ActivityRegistry, in txn: ReadTransaction) throws -> CurrentActivity? {
        guard let entry = try entry(onDevice: device, in: txn) else { return nil }
        return try resolved(device: device, entry, registry: registry, in: txn)
    }

    /// Every current activity, by device (UTF-8 byte order).
    public func all(registry: ActivityRegistry, in txn: ReadTransaction) throws -> [CurrentActivity] {
        var result: [CurrentActivity] = []
        let cursor = try current.cursor(in: txn)
        var entry = try cursor.first()
        while let (device, value) = entry {
            let message = try Activitylog_V1_CurrentEntry(serializedBytes: value)
            result.append(try resolved(device: device, message, registry: registry, in: txn))
            entry = try cursor.next()
        }
        return result
    }

    private func resolved(device: String, _ entry: Activitylog_V1_CurrentEntry, registry: ActivityRegistry,
                          in txn: ReadTransaction) throws -> CurrentActivity {
        guard let record = try registry.record(entry.activity, in: txn) else {
            throw PayloadError("activity \"\(entry.activity)\" is current on \(device) but missing from the registry")
        }
        return CurrentActivity(device: device, activity: record.activity,
                               becameCurrentAt: Date(microseconds: entry.becameCurrentAtMicros), position: entry.position)
    }

    // MARK: Writing

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in try apply(event, in: txn) }
    }

    private func apply(_ recorded: RecordedEvent, in txn: WriteTransaction) throws {
        guard let event = try ActivityEvent(recorded) else { return }
        switch event {
        case .becameCurrent(let m):
            // Replaces the superseded activity's entry: one current per device.
            var entry = Activitylog_V1_CurrentEntry()
            entry.activity = m.activity
            if m.hasUser { entry.user = m.user }
            entry.becameCurrentAtMicros = recorded.appendedAtMicroseconds
            entry.position = recorded.position
            try current.put(message: entry, forKey: m.device, in: txn)
        case .resignedCurrent(let m):
            try removeIfCurrent(m.activity, device: m.device, in: txn)
        case .invalidated(let m):
            try removeIfCurrent(m.activity, device: m.device, in: txn)
        default:
            break
        }
    }

    private func removeIfCurrent(_ activity: String, device: String, in txn: WriteTransaction) throws {
        if let entry = try entry(onDevice: device, in: txn), entry.activity == activity {
            try current.delete(device, in: txn)
        }
    }
}
