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
/// once an event of it was applied).
///
/// ```swift
/// let id = try store.read { txn in try store.views.spaces.id(of: "alice", in: txn) }   // nil: no such user
/// ```
public struct SpaceDirectory: Projection {
    public var name: String { "spaces" }
    public var version: UInt32 { 1 }
    public var databaseNames: [String] { ["spaces.byName", "spaces.byID"] }

    /// The id of the default space `""`.
    public static let defaultSpace: UInt32 = 0
    /// An id no space ever has: lookups with it find nothing.
    static let none = UInt32.max

    let byName: Database<[UInt8], [UInt8]>
    let byID: Database<[UInt8], [UInt8]>

    public init(openingIn txn: WriteTransaction) throws {
        byName = try txn.createDatabase("spaces.byName")
        byID = try txn.createDatabase("spaces.byID")
    }

    // MARK: Reading

    /// The id of `user`'s space; nil when no event of that space was ever
    /// applied (the default space `""` is always 0).
    public func id(of user: String, in txn: ReadTransaction) throws -> UInt32? {
        if user.isEmpty { return Self.defaultSpace }
        guard user.utf8.count <= 511 else { return nil }
        return try byName.withValue(forKey: Array(user.utf8), in: txn) { bytes in
            guard bytes.count == 4 else { throw PayloadError("spaces.byName holds a \(bytes.count)-byte id for user \"\(user)\"") }
            return UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self))
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
            result.append((String(decoding: e.value, as: UTF8.self), UInt32(bigEndian: e.key.loadUnaligned(as: UInt32.self))))
            entry = try cursor.nextBytes()
        }
        return result.sorted { utf8Less($0.user, $1.user) }
    }

    // MARK: Writing

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in
            guard let user = try EventSpace.user(of: event) else { return }
            try register(user, in: txn)
        }
    }

    private func register(_ user: String, in txn: WriteTransaction) throws {
        if user.isEmpty {
            let key = SpaceKey.prefix(of: Self.defaultSpace)
            if try !byID.contains(key, in: txn) { try byID.put([], forKey: key, in: txn) }
            return
        }
        if try byName.contains(Array(user.utf8), in: txn) { return }
        let last = try byID.cursor(in: txn).lastBytes()
        let id = max(1, (last.map { UInt32(bigEndian: $0.key.loadUnaligned(as: UInt32.self)) } ?? 0) + 1)
        let idBytes = SpaceKey.prefix(of: id)
        try byName.put(idBytes, forKey: Array(user.utf8), in: txn)
        try byID.put(Array(user.utf8), forKey: idBytes, in: txn)
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
        return try byID.withValue(forKey: SpaceKey.prefix(of: id), in: txn) { String(decoding: $0, as: UTF8.self) }
    }
}
