import EventLog
import Foundation
import LMDB

/// The current-activity view: at most one current activity per device, and
/// when it became current.
///
/// Database: `activity.current` (space id and device → `CurrentEntry`
/// message): a user's devices are one key range, which Handoff walks. The
/// activity's properties are read from the registry, so that they are never
/// stored twice.
public struct CurrentActivityView: Projection {
    public var name: String { "activity.current" }
    public var version: UInt32 { 2 }
    public var databaseNames: [String] { ["activity.current"] }

    let current: Database<SpaceKey, [UInt8]>
    let spaces: SpaceDirectory

    public init(openingIn txn: WriteTransaction, spaces: SpaceDirectory) throws {
        self.spaces = spaces
        current = try txn.createDatabase("activity.current")
    }

    // MARK: Reading

    /// The id of the activity current on `device` of `space` and its entry, or nil.
    func entry(onDevice device: String, space: UInt32, in txn: ReadTransaction) throws -> Activitylog_V1_CurrentEntry? {
        guard !device.isEmpty, device.utf8.count <= 507 else { return nil }
        return try current.message(SpaceKey(space: space, device), in: txn)
    }

    /// The activity current on `device` of `space`, with its properties from `registry`.
    public func activity(onDevice device: String, space: UInt32, registry: ActivityRegistry,
                         in txn: ReadTransaction) throws -> CurrentActivity? {
        guard let entry = try entry(onDevice: device, space: space, in: txn) else { return nil }
        return try resolved(device: device, space: space, entry, registry: registry, in: txn)
    }

    /// Every current activity of `space`, by device (UTF-8 byte order): one
    /// key range, however many other users the store holds.
    public func all(space: UInt32, registry: ActivityRegistry, in txn: ReadTransaction) throws -> [CurrentActivity] {
        var result: [CurrentActivity] = []
        try current.forEach(inSpace: space, in: txn) { key, value in
            let message = try Activitylog_V1_CurrentEntry(serializedBytes: [UInt8](value))
            result.append(try resolved(device: String(decoding: key, as: UTF8.self), space: space, message, registry: registry, in: txn))
            return true
        }
        return result
    }

    private func resolved(device: String, space: UInt32, _ entry: Activitylog_V1_CurrentEntry, registry: ActivityRegistry,
                          in txn: ReadTransaction) throws -> CurrentActivity {
        guard let record = try registry.record(entry.activity, space: space, in: txn) else {
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
        if let forgotten = try spaces.forgottenSpace(by: recorded, in: txn) {
            try current.removeAll(withPrefix: SpaceKey.prefix(of: forgotten), in: txn)
            return
        }
        guard let event = try ActivityEvent(recorded), let user = event.user else { return }
        switch event {
        case .becameCurrent(let m):
            // Replaces the superseded activity's entry: one current per device.
            var entry = Activitylog_V1_CurrentEntry()
            entry.activity = m.activity
            entry.becameCurrentAtMicros = recorded.appendedAtMicroseconds
            entry.position = recorded.position
            let space = try spaces.appliedID(of: user, recorded, in: txn)
            try current.put(message: entry, forKey: SpaceKey(space: space, m.device), in: txn)
        case .resignedCurrent(let m):
            try removeIfCurrent(m.activity, device: m.device, space: try spaces.appliedID(of: user, recorded, in: txn), in: txn)
        case .invalidated(let m):
            try removeIfCurrent(m.activity, device: m.device, space: try spaces.appliedID(of: user, recorded, in: txn), in: txn)
        default:
            break
        }
    }

    private func removeIfCurrent(_ activity: String, device: String, space: UInt32, in txn: WriteTransaction) throws {
        if let entry = try entry(onDevice: device, space: space, in: txn), Name.equal(entry.activity, activity) {
            try current.delete(SpaceKey(space: space, device), in: txn)
        }
    }
}
