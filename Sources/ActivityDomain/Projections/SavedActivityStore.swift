import EventLog
import Foundation
import LMDB

/// The saved-activity store: saved copies by key (`persistentIdentifier`,
/// else the activity id), lookups by `targetContentIdentifier` and
/// `webpageURL`, and, for identifiers whose copy is gone, what removed it.
///
/// Every key starts with the user space's id (u32, big-endian; see
/// ``SpaceKey``): keys are unique within a space, and one user's copies are
/// one key range. Databases:
/// - `activity.saved`: space, key → `SavedRecord` message.
/// - `activity.savedIndex.targetContentIdentifier`, `activity.savedIndex.webpageURL`:
///   space, first 250 UTF-8 bytes of the value, 0x00, key → empty. Lookups
///   compare the full value in the record, so long values cannot collide.
/// - `activity.savedRemovals`: space, kind byte (`k` key, `t`
///   targetContentIdentifier, `u` webpageURL) + first 400 UTF-8 bytes of the
///   identifier → `RemovalRecord`.
public struct SavedActivityStore: Projection {
    public var name: String { "activity.saved" }
    public var version: UInt32 { 2 }
    public var databaseNames: [String] {
        ["activity.saved", "activity.savedIndex.targetContentIdentifier", "activity.savedIndex.webpageURL", "activity.savedRemovals"]
    }

    let saved: Database<SpaceKey, [UInt8]>
    let byTargetContentIdentifier: Database<[UInt8], [UInt8]>
    let byWebpageURL: Database<[UInt8], [UInt8]>
    let removals: Database<[UInt8], [UInt8]>
    let spaces: SpaceDirectory

    static let indexPrefixBytes = 250
    static let removalPrefixBytes = 400

    /// How many times of becoming current a record keeps for suggestions.
    static let recentCount = 10

    public init(openingIn txn: WriteTransaction, spaces: SpaceDirectory) throws {
        self.spaces = spaces
        saved = try txn.createDatabase("activity.saved")
        byTargetContentIdentifier = try txn.createDatabase("activity.savedIndex.targetContentIdentifier")
        byWebpageURL = try txn.createDatabase("activity.savedIndex.webpageURL")
        removals = try txn.createDatabase("activity.savedRemovals")
    }

    /// The ways an identifier can name a saved copy.
    enum IdentifierKind: UInt8, CaseIterable {
        case key = 0x6B          // "k"
        case targetContentIdentifier = 0x74   // "t"
        case webpageURL = 0x75   // "u"
    }

    // MARK: Reading

    func rawRecord(_ key: String, space: UInt32, in txn: ReadTransaction) throws -> Activitylog_V1_SavedRecord? {
        guard !key.isEmpty, key.utf8.count <= 507 else { return nil }
        return try saved.message(SpaceKey(space: space, key), in: txn)
    }

    /// The copy saved under `key`, or nil.
    public func activity(forKey key: String, space: UInt32, in txn: ReadTransaction) throws -> SavedActivity? {
        try rawRecord(key, space: space, in: txn).map(SavedActivity.init(proto:))
    }

    /// Every saved copy, by key (UTF-8 byte order).
    public func all(space: UInt32, in txn: ReadTransaction) throws -> [SavedActivity] {
        try allRecords(space: space, in: txn).map(SavedActivity.init(proto:))
    }

    func allRecords(space: UInt32, in txn: ReadTransaction) throws -> [Activitylog_V1_SavedRecord] {
        var result: [Activitylog_V1_SavedRecord] = []
        try saved.forEach(inSpace: space, in: txn) { _, value in
            result.append(try Activitylog_V1_SavedRecord(serializedBytes: [UInt8](value)))
            return true
        }
        return result
    }

    /// How many saved copies `space` holds.
    public func count(space: UInt32, in txn: ReadTransaction) throws -> Int {
        try saved.count(inSpace: space, in: txn)
    }

    /// The copies whose `targetContentIdentifier` is `identifier`, most recently saved first.
    public func activities(withTargetContentIdentifier identifier: String, space: UInt32,
                           in txn: ReadTransaction) throws -> [SavedActivity] {
        try lookup(identifier, space: space, in: byTargetContentIdentifier, txn) {
            $0.hasTargetContentIdentifier && Name.equal($0.targetContentIdentifier, identifier)
        }
    }

    /// The copies whose `webpageURL` is `url` (compared as strings), most recently saved first.
    public func activities(withWebpageURL url: String, space: UInt32, in txn: ReadTransaction) throws -> [SavedActivity] {
        try lookup(url, space: space, in: byWebpageURL, txn) { $0.hasWebpageURL && Name.equal($0.webpageURL, url) }
    }

    private func lookup(_ identifier: String, space: UInt32, in index: Database<[UInt8], [UInt8]>, _ txn: ReadTransaction,
                        matches: (Activitylog_V1_Activity) -> Bool) throws -> [SavedActivity] {
        guard !identifier.isEmpty else { return [] }
        let prefix = SpaceKey.indexPrefix(space: space, identifier, limit: Self.indexPrefixBytes, exact: true).encoded
        var found: [SavedActivity] = []
        let cursor = try index.cursor(in: txn)
        var entry = try cursor.seek(atOrAfter: prefix)
        while let (key, _) = entry, key.starts(with: prefix) {
            let savedKey = String(decoding: key[prefix.count...], as: UTF8.self)
            if let record = try rawRecord(savedKey, space: space, in: txn), matches(record.copy) {
                found.append(try SavedActivity(proto: record))
            }
            entry = try cursor.next()
        }
        return found.sorted { $0.position > $1.position }
    }

    /// What removed the copy `identifier` named as `kind`, or nil.
    func removal(of identifier: String, as kind: IdentifierKind, space: UInt32, in txn: ReadTransaction) throws -> SavedActivityRemoval? {
        guard !identifier.isEmpty else { return nil }
        let key = Self.removalKey(identifier, as: kind, space: space)
        guard let record: Activitylog_V1_RemovalRecord = try removals.message(key, in: txn),
              Name.equal(record.identifier, identifier) else { return nil }
        return SavedActivityRemoval(proto: record)
    }

    /// Resolves a `persistentIdentifier` (or a key), `targetContentIdentifier`
    /// or `webpageURL`: the saved copy it names (the most recently saved when
    /// several), else the latest removal of one it named, else unknown.
    public func resolve(_ identifier: String, space: UInt32, in txn: ReadTransaction) throws -> SavedActivityResolution {
        if let copy = try activity(forKey: identifier, space: space, in: txn) { return .saved(copy) }
        if let copy = try activities(withTargetContentIdentifier: identifier, space: space, in: txn).first { return .saved(copy) }
        if let copy = try activities(withWebpageURL: identifier, space: space, in: txn).first { return .saved(copy) }
        let removals = try IdentifierKind.allCases.compactMap { try removal(of: identifier, as: $0, space: space, in: txn) }
        if let latest = removals.max(by: { $0.position < $1.position }) { return .removed(latest) }
        return .unknown
    }

    // MARK: Writing

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in try apply(event, in: txn) }
    }

    private func apply(_ recorded: RecordedEvent, in txn: WriteTransaction) throws {
        if let forgotten = try spaces.forgottenSpace(by: recorded, in: txn) {
            let prefix = SpaceKey.prefix(of: forgotten)
            try saved.removeAll(withPrefix: prefix, in: txn)
            try byTargetContentIdentifier.removeAll(withPrefix: prefix, in: txn)
            try byWebpageURL.removeAll(withPrefix: prefix, in: txn)
            try removals.removeAll(withPrefix: prefix, in: txn)
            return
        }
        guard let event = try ActivityEvent(recorded), let user = event.user else { return }
        let space = try spaces.appliedID(of: user, recorded, in: txn)
        switch event {
        case .saved(let m):
            let old = try rawRecord(m.key, space: space, in: txn)
            if let old {
                try unindex(old, space: space, in: txn)
                // Identifiers the old copy answered to and the new one does not: gone, by this save.
                if old.copy.hasTargetContentIdentifier,
                   !(m.copy.hasTargetContentIdentifier && Name.equal(m.copy.targetContentIdentifier, old.copy.targetContentIdentifier)) {
                    try remember(old.copy.targetContentIdentifier, as: .targetContentIdentifier, key: m.key, space: space, recorded, in: txn)
                }
                if old.copy.hasWebpageURL, !(m.copy.hasWebpageURL && Name.equal(m.copy.webpageURL, old.copy.webpageURL)) {
                    try remember(old.copy.webpageURL, as: .webpageURL, key: m.key, space: space, recorded, in: txn)
                }
            }
            var record = Activitylog_V1_SavedRecord()
            record.key = m.key
            record.copy = m.copy
            record.savedAtMicros = recorded.appendedAtMicroseconds
            record.position = recorded.position
            record.trigger = m.trigger
            // Suggestions rank by how often and how recently a key's copy was
            // saved on becoming current; counted while the key holds a copy.
            record.becameCurrentCount = old?.becameCurrentCount ?? 0
            record.recentBecameCurrentMicros = old?.recentBecameCurrentMicros ?? []
            if m.trigger == .becameCurrent {
                record.becameCurrentCount += 1
                record.recentBecameCurrentMicros.append(recorded.appendedAtMicroseconds)
                if record.recentBecameCurrentMicros.count > Self.recentCount {
                    record.recentBecameCurrentMicros.removeFirst(record.recentBecameCurrentMicros.count - Self.recentCount)
                }
            }
            try saved.put(message: record, forKey: SpaceKey(space: space, m.key), in: txn)
            try index(record, space: space, in: txn)
            // It resolves again: forget earlier removals of what it answers to.
            try forget(m.key, as: .key, space: space, in: txn)
            if m.copy.hasTargetContentIdentifier { try forget(m.copy.targetContentIdentifier, as: .targetContentIdentifier, space: space, in: txn) }
            if m.copy.hasWebpageURL { try forget(m.copy.webpageURL, as: .webpageURL, space: space, in: txn) }
        case .savedDeleted(let m):
            for key in m.removedKeys { try remove(key, space: space, recorded, in: txn) }
        case .savedAllDeleted(let m):
            for key in m.removedKeys { try remove(key, space: space, recorded, in: txn) }
        default:
            break
        }
    }

    private func remove(_ key: String, space: UInt32, _ recorded: RecordedEvent, in txn: WriteTransaction) throws {
        guard let record = try rawRecord(key, space: space, in: txn) else {
            throw PayloadError("\(recorded.type) at position \(recorded.position) removes saved key \"\(key)\", which the store does not hold")
        }
        try unindex(record, space: space, in: txn)
        try saved.delete(SpaceKey(space: space, key), in: txn)
        try remember(key, as: .key, key: key, space: space, recorded, in: txn)
        if record.copy.hasTargetContentIdentifier {
            try remember(record.copy.targetContentIdentifier, as: .targetContentIdentifier, key: key, space: space, recorded, in: txn)
        }
        if record.copy.hasWebpageURL { try remember(record.copy.webpageURL, as: .webpageURL, key: key, space: space, recorded, in: txn) }
    }

    /// Space, the first 250 bytes of `value`, 0x00, the saved key: a key of
    /// the targetContentIdentifier and webpageURL indexes.
    private func indexKey(_ value: String, savedKey: String, space: UInt32) -> [UInt8] {
        SpaceKey(space: space, indexing: value, limit: Self.indexPrefixBytes, of: savedKey).encoded
    }

    /// Space, kind, the first 400 bytes of `identifier`: a key of `activity.savedRemovals`.
    static func removalKey(_ identifier: String, as kind: IdentifierKind, space: UInt32) -> [UInt8] {
        SpaceKey(space: space, tag: kind.rawValue, identifier, limit: removalPrefixBytes).encoded
    }

    private func index(_ record: Activitylog_V1_SavedRecord, space: UInt32, in txn: WriteTransaction) throws {
        if record.copy.hasTargetContentIdentifier {
            try byTargetContentIdentifier.put([], forKey: indexKey(record.copy.targetContentIdentifier, savedKey: record.key, space: space), in: txn)
        }
        if record.copy.hasWebpageURL {
            try byWebpageURL.put([], forKey: indexKey(record.copy.webpageURL, savedKey: record.key, space: space), in: txn)
        }
    }

    private func unindex(_ record: Activitylog_V1_SavedRecord, space: UInt32, in txn: WriteTransaction) throws {
        if record.copy.hasTargetContentIdentifier {
            try byTargetContentIdentifier.delete(indexKey(record.copy.targetContentIdentifier, savedKey: record.key, space: space), in: txn)
        }
        if record.copy.hasWebpageURL {
            try byWebpageURL.delete(indexKey(record.copy.webpageURL, savedKey: record.key, space: space), in: txn)
        }
    }

    private func remember(_ identifier: String, as kind: IdentifierKind, key: String, space: UInt32, _ recorded: RecordedEvent,
                          in txn: WriteTransaction) throws {
        guard !identifier.isEmpty else { return }
        var removal = Activitylog_V1_RemovalRecord()
        removal.identifier = identifier
        removal.key = key
        removal.position = recorded.position
        removal.operation = recorded.type
        removal.removedAtMicros = recorded.appendedAtMicroseconds
        try removals.put(message: removal, forKey: Self.removalKey(identifier, as: kind, space: space), in: txn)
    }

    private func forget(_ identifier: String, as kind: IdentifierKind, space: UInt32, in txn: WriteTransaction) throws {
        guard !identifier.isEmpty else { return }
        let key = Self.removalKey(identifier, as: kind, space: space)
        if let record: Activitylog_V1_RemovalRecord = try removals.message(key, in: txn), Name.equal(record.identifier, identifier) {
            try removals.delete(key, in: txn)
        }
    }
}
