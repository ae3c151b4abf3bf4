/// How an ``Environment`` is opened.
///
/// ```swift
/// var options = EnvironmentOptions()
/// options.durability = .noMetaSync
/// options.mapSize = 1 << 20   // grows by itself when full
/// let env = try Environment(path: "/var/lib/app/store", options: options)
/// ```
public struct EnvironmentOptions: Sendable {
    /// The initial size of the memory map in bytes. It is a start, not a limit:
    /// the map doubles whenever a write finds it full (`mdb_env_set_mapsize`).
    public var mapSize: Int = 64 << 20
    /// Reader slots in the lock file (`mdb_env_set_maxreaders`); LMDB's default is 126.
    public var maxReaders: UInt32 = 1024
    /// Named databases the environment can hold (`mdb_env_set_maxdbs`).
    public var maxDatabases: UInt32 = 64
    /// What a commit waits for; see ``Durability``.
    public var durability: Durability = .durable
    /// Open without write access (`MDB_RDONLY`): every write throws.
    public var readOnly: Bool = false
    /// Permission bits of the files the environment creates (`data.mdb`,
    /// `lock.mdb`): this user's alone, since they hold every user's data.
    public var fileMode: UInt32 = 0o600
    /// Permission bits of the directories it creates (the environment's,
    /// and those above it that are missing).
    public var directoryMode: UInt32 = 0o700
    /// Told how long each write transaction's `mdb_txn_commit` took, in
    /// nanoseconds (the dirty pages written and, when durable, the fsyncs):
    /// what a service's metrics report as commit I/O.
    public var commitObserver: (@Sendable (_ nanoseconds: UInt64) -> Void)?

    public init() {}
}
