import CLMDB

/// Flags of `mdb_dbi_open`.
public struct DatabaseFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `MDB_CREATE`: create the database when missing.
    public static let create = DatabaseFlags(rawValue: UInt32(MDB_CREATE))
    /// `MDB_DUPSORT`: several sorted values per key.
    public static let duplicateSort = DatabaseFlags(rawValue: UInt32(MDB_DUPSORT))
    /// `MDB_DUPFIXED`: with `duplicateSort`, all values of one size.
    public static let duplicateFixed = DatabaseFlags(rawValue: UInt32(MDB_DUPFIXED))
}

/// Flags of `mdb_put` and `mdb_cursor_put`.
public struct PutFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `MDB_NOOVERWRITE`: fail with ``LMDBError/keyExists`` when the key is there.
    public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// `MDB_APPEND`: the key sorts after every key present (fast path for
    /// sequential keys; ``LMDBError/keyExists`` otherwise).
    public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
    /// `MDB_APPENDDUP`: as `append`, for the values of a `duplicateSort` key.
    public static let appendDuplicate = PutFlags(rawValue: UInt32(MDB_APPENDDUP))
    /// `MDB_NODUPDATA`: in a `duplicateSort` database, fail when the pair exists.
    public static let noDuplicateData = PutFlags(rawValue: UInt32(MDB_NODUPDATA))
}
