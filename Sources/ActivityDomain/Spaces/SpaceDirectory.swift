import EventLog
import LMDB

/// The user spaces of a store: each user's name and the dense id its keys
/// start with in every other view (see ``SpaceKey``).
///
/// Ids are given in log order: the default space `""` is always 0, and each
/// other user gets the next id when the first event of their space is
/// applied, so a rebuild gives every user the same id. This projection is
/// applied first, so that the others find the space of each event here.
///
/// Databases: `spaces.byName` (user name → u32 id, big-endian; the default
/// space is not in it: LMDB keys cannot be empty, and its id is always 0),
/// `spaces.byID` (u32 id, big-endian → user name; the default space too,
/// once an event of it was applied; a forgotten space keeps its id with the
/// value 0xFF, never UTF-8, so that ids are never reused),
/// `spaces.events` (u32 id ‖ position, both big-endian → empty: every event
/// of a user's space but the default one, what `forgetUser` redacts without
/// scanning the log), `spaces.forgotten` (position of a redaction record →
/// the u32 id of the space it forgot).
///
/// Forgetting and rebuilding agree: a redacted event has no readable space,
/// so a rebuild gives the forgotten space its id at the first redacted event
/// that the same redaction record covers, which is the event that first
/// gave it an id live. Every later user therefore gets the same id in a
/// rebuild as live, and the forgotten user's name is nowhere in the views.
///
/// ```swift
/// let id = try store.read { txn in try store.views.spaces.id(of: "alice", in: txn) }   // nil: no such user
/// ```
public struct SpaceDirectory: Projection {
    public var name: String { "spaces" }
    public var version: UInt32 { 2 }
    public var databaseNames: [String] { ["spaces.byName", "spaces.byID", "spaces.events", "spaces.forgotten"] }

    /// The id of the default space `""`.
    public static let defaultSpace: UInt32 = 0
    /// An id no space ever has: lookups with it find nothing.
    static let none = UInt32.max

    let byName: Database<[UInt8], [UInt8]>
    let byID: Database<[UInt8], [UInt8]>
    let events: Database<SpaceKey, [UInt8]>
    let forgotten: Database<UInt64, [UInt8]>
    /// `spaces.byID`'s value for a forgotten space.
    static let tombstone: [UInt8] = [0xFF]

    public init(openingIn txn: WriteTransaction) throws {
        byName = try txn.createDatabase("spaces.byName")
        byID = try txn.createDatabase("spaces.byID")
        events = try txn.createDatabase("spaces.events")
        forgotten = try txn.createDatabase("spaces.forgotten")
    }

    // MARK: Reading

    /// The id of `user`'s space; nil when no event of that space was ever
    /// applied (the default space `""` is always 0).
    public func id(of user: String, in txn: ReadTransaction) throws -> UInt32? {
        if user.isEmpty { return Self.defaultSpace }
        guard user.utf8.count <= 511 else { return nil }
        return try byName.withValue(forKey: Array(user.utf8), in: txn) { bytes in
            guard bytes.count == 4 else { throw PayloadError("spaces.byName holds a \(bytes.count)-byte id for user \"\(user)\"") }
            return BigEndian.load(UInt32.self, from: bytes)
        }
    }

    /// As ``id(of:in:)``, with ``none`` for a user that has no space yet, so
    /// that every lookup with it finds nothing.
    func lookupID(of user: String, in txn: ReadTransaction) throws -> UInt32 {
        try id(of: user, in: txn) ?? Self.none
    }

    /// Every user with a space, and its id, by name (UTF-8 byte order). The
    /// default space is listed once anything happened in it.
    public func all(in txn: ReadTransaction) throws -> [(user: String, id: UInt32)] {
        var result: [(user: String, id: UInt32)] = []
        let cursor = try byID.cursor(in: txn)
        var entry = try cursor.firstBytes()
        while let e = entry {
            if e.value.elementsEqual(Self.tombstone) {
                entry = try cursor.nextBytes()
                continue
            }
            result.append((String(decoding: e.value, as: UTF8.self), BigEndian.load(UInt32.self, from: e.key)))
            entry = try cursor.nextBytes()
        }
        return result.sorted { utf8Less($0.user, $1.user) }
    }

    // MARK: Writing

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in
            if event.type == RedactionRecord.type {
                try forget(event, in: txn)
                return
            }
            if event.isRedacted {
                if let by = event.redactedBy {
                    let user = try event.redactionRecord.flatMap { try ForgetUser.user(context: $0.context, at: by) }
                    try reserve(forgottenBy: by, user: user, in: txn)
                }
                return
            }
            guard let user = try EventSpace.user(of: event) else { return }
            let id = try register(user, in: txn)
            if id != Self.defaultSpace {
                try events.put([], forKey: SpaceKey(space: id, position: event.position), in: txn)
            }
        }
    }

    @discardableResult
    private func register(_ user: String, in txn: WriteTransaction) throws -> UInt32 {
        if user.isEmpty {
            let key = SpaceKey.prefix(of: Self.defaultSpace)
            if try !byID.contains(key, in: txn) { try byID.put([], forKey: key, in: txn) }
            return Self.defaultSpace
        }
        if let id = try id(of: user, in: txn) { return id }
        let id = try nextID(in: txn)
        let idBytes = SpaceKey.prefix(of: id)   // the id, as the other views' keys start
        try byName.put(idBytes, forKey: Array(user.utf8), in: txn)
        try byID.put(Array(user.utf8), forKey: idBytes, in: txn)
        return id
    }

    private func nextID(in txn: ReadTransaction) throws -> UInt32 {
        let last = try byID.cursor(in: txn).lastBytes()
        return max(1, (last.map { BigEndian.load(UInt32.self, from: $0.key) } ?? 0) + 1)
    }

    /// A redacted event: the first one a redaction record covers takes the
    /// next id for the space that record forgets (see the type's comment),
    /// unless `user`, the user that record forgets, has a space already: a
    /// follower that took the user's earlier events before the forget, and
    /// meets the later ones redacted before the record that redacted them.
    /// That space is the one the record forgets.
    private func reserve(forgottenBy authorization: Position, user: String?, in txn: WriteTransaction) throws {
        if try forgotten.contains(authorization, in: txn) { return }
        if let user, let id = try id(of: user, in: txn), id != Self.defaultSpace {
            try forgotten.put(SpaceKey.prefix(of: id), forKey: authorization, in: txn)
            return
        }
        let id = try nextID(in: txn)
        try byID.put(Self.tombstone, forKey: SpaceKey.prefix(of: id), in: txn)
        try forgotten.put(SpaceKey.prefix(of: id), forKey: authorization, in: txn)
    }

    /// A redaction record of `forgetUser`: the user's name leaves the
    /// directory, its id stays taken, its event index goes.
    private func forget(_ event: RecordedEvent, in txn: WriteTransaction) throws {
        guard let user = try ForgetUser.user(of: event) else { return }
        if let id = try forgottenSpace(by: event, in: txn) {
            // Redacted events met first gave the space its entry: a rebuild
            // (a tombstone already, no events indexed) or a lagging follower
            // (the user's space as its earlier events built it).
            if try self.id(of: user, in: txn) != nil { _ = try byName.delete(Array(user.utf8), in: txn) }
            try byID.put(Self.tombstone, forKey: SpaceKey.prefix(of: id), in: txn)
            try events.removeAll(withPrefix: SpaceKey.prefix(of: id), in: txn)
            return
        }
        guard let id = try id(of: user, in: txn), id != Self.defaultSpace else { return }
        _ = try byName.delete(Array(user.utf8), in: txn)
        try byID.put(Self.tombstone, forKey: SpaceKey.prefix(of: id), in: txn)
        try forgotten.put(SpaceKey.prefix(of: id), forKey: event.position, in: txn)
        try events.removeAll(withPrefix: SpaceKey.prefix(of: id), in: txn)
    }

    /// The id of the space that the redaction record `event` forgot, once
    /// this projection applied it: what the other projections drop.
    func forgottenSpace(by event: RecordedEvent, in txn: ReadTransaction) throws -> UInt32? {
        guard event.type == RedactionRecord.type else { return nil }
        return try forgotten.withValue(forKey: event.position, in: txn) { bytes in
            guard bytes.count == 4 else { throw PayloadError("spaces.forgotten holds a \(bytes.count)-byte id at \(event.position)") }
            return BigEndian.load(UInt32.self, from: bytes)
        }
    }

    /// The positions of every event of space `id`, in order.
    func positions(ofSpace id: UInt32, in txn: ReadTransaction) throws -> PositionRanges {
        var ranges = PositionRanges()
        try events.forEach(inSpace: id, in: txn) { key, _ in
            if let position = BigEndian.value(UInt64.self, of: key) { ranges.append(position) }
            return true
        }
        return ranges
    }
}

extension SpaceDirectory {
    /// The id of the space of an event being applied: the directory applied
    /// it first, so a missing one means a corrupt view.
    func appliedID(of user: String, _ event: RecordedEvent, in txn: ReadTransaction) throws -> UInt32 {
        guard let id = try id(of: user, in: txn) else {
            throw PayloadError("\(event.type) at position \(event.position) acts in user space \"\(user)\", which spaces.byName does not hold")
        }
        return id
    }
}

extension SpaceDirectory {
    /// The user whose space has id `id`, or nil.
    public func user(ofID id: UInt32, in txn: ReadTransaction) throws -> String? {
        if id == Self.defaultSpace { return "" }
        return try byID.withValue(forKey: SpaceKey.prefix(of: id), in: txn) {
            $0.elementsEqual(Self.tombstone) ? nil : String(decoding: $0, as: UTF8.self)
        } ?? nil
    }
}
