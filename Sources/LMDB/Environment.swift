import CLMDB
import Foundation

/// An LMDB environment: one directory holding `data.mdb` and `lock.mdb`,
/// shared by every process that opens it.
///
/// Transactions are scoped to a closure so that none outlives its use:
///
/// ```swift
/// let env = try Environment(path: dir)
/// let db = try env.write { txn in try txn.openDatabase("log", as: UInt64.self, [UInt8].self) }
/// try env.write { txn in try db.put([1, 2, 3], forKey: 1, in: txn) }
/// let value = try env.read { txn in try db.get(1, in: txn) }
/// ```
///
/// What this type adds to `MDB_env`:
/// - **The map grows by itself.** A write that finds the map full
///   (`MDB_MAP_FULL`) is aborted, the map doubles, and the write closure runs
///   again; a map grown by another process (`MDB_MAP_RESIZED`) is adopted.
///   So a write closure may run more than once: it must only act through its
///   transaction.
/// - **Stale reader slots are cleared on open** (`mdb_reader_check`).
/// - **Read transactions may cross threads**: the environment is opened with
///   `MDB_NOTLS`.
/// - **One environment per path and process**, which LMDB requires: opening a
///   path that this process already has open throws.
///
/// `@unchecked Sendable`: an `MDB_env` may be shared by threads; the only
/// operation that needs every transaction closed (`mdb_env_set_mapsize`) runs
/// behind ``TransactionGate``.
public final class Environment: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The directory, resolved.
    public let path: String
    public let options: EnvironmentOptions
    let gate = TransactionGate()

    /// Opens (creating when needed) the environment in directory `path`.
    /// Calls `mdb_env_create`, `mdb_env_set_mapsize`, `mdb_env_set_maxreaders`,
    /// `mdb_env_set_maxdbs`, `mdb_env_open` and `mdb_reader_check`.
    public init(path: String, options: EnvironmentOptions = EnvironmentOptions()) throws {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        if !options.readOnly {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        let resolved = url.resolvingSymlinksInPath().path
        try OpenEnvironments.shared.claim(resolved)
        var env: OpaquePointer?
        do {
            try check(mdb_env_create(&env), "mdb_env_create")
            guard let env else { throw LMDBError(code: ENOMEM, call: "mdb_env_create") }
            do {
                try check(mdb_env_set_mapsize(env, options.mapSize), "mdb_env_set_mapsize")
                try check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders")
                try check(mdb_env_set_maxdbs(env, options.maxDatabases), "mdb_env_set_maxdbs")
                var flags = UInt32(MDB_NOTLS) | options.durability.environmentFlags
                if options.readOnly { flags |= UInt32(MDB_RDONLY) }
                try check(mdb_env_open(env, resolved, flags, mdb_mode_t(options.fileMode)), "mdb_env_open(\(resolved))")
                var dead: Int32 = 0
                try check(mdb_reader_check(env, &dead), "mdb_reader_check")
            } catch {
                mdb_env_close(env)
                throw error
            }
        } catch {
            OpenEnvironments.shared.release(resolved)
            throw error
        }
        self.pointer = env!
        self.path = resolved
        self.options = options
    }

    deinit {
        mdb_env_close(pointer)
        OpenEnvironments.shared.release(path)
    }

    // MARK: Transactions

    /// Runs `body` in a read-only transaction (`mdb_txn_begin` with
    /// `MDB_RDONLY`), which sees the last commit made before it began and
    /// nothing after. The transaction ends when `body` returns.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        gate.enterShared()
        defer { gate.leaveShared() }
        let txn = try ReadTransaction(environment: self, begin: beginAdoptingResize(parent: nil, flags: UInt32(MDB_RDONLY)))
        defer { txn.abortIfOpen() }
        return try body(txn)
    }

    /// Runs `body` in a write transaction and commits it (`mdb_txn_commit`)
    /// when `body` returns; aborts (`mdb_txn_abort`) when it throws, so
    /// nothing of it is written.
    ///
    /// One write transaction at a time exists per environment, across
    /// processes: this call blocks until LMDB's writer lock is free. `body`
    /// runs again from the start after the map grows, so it must act only
    /// through its transaction. It must not suspend: a write transaction
    /// belongs to its thread.
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        while true {
            do {
                return try writeOnce(body)
            } catch let error as LMDBError where error.code == MDB_MAP_FULL {
                try grow()
            }
        }
    }

    private func writeOnce<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        gate.enterShared()
        defer { gate.leaveShared() }
        let txn = try WriteTransaction(environment: self, begin: beginAdoptingResize(parent: nil, flags: 0))
        defer { txn.abortIfOpen() }
        let result = try body(txn)
        try txn.commit()
        return result
    }

    /// `mdb_txn_begin`, adopting a map that another process grew.
    private func beginAdoptingResize(parent: OpaquePointer?, flags: UInt32) throws -> OpaquePointer {
        while true {
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(pointer, parent, flags, &txn)
            if rc == MDB_MAP_RESIZED {
                gate.leaveShared()
                defer { gate.enterShared() }
                try gate.exclusively {
                    try check(mdb_env_set_mapsize(pointer, 0), "mdb_env_set_mapsize")
                }
                continue
            }
            try check(rc, "mdb_txn_begin")
            return txn!
        }
    }

    /// Doubles the map (`mdb_env_set_mapsize`) once no transaction of this
    /// process is open, starting from the larger of this process's size and
    /// the committed one (another process may have grown it). Size 0 adopts
    /// the committed size, which lags ours until a grown write commits: doubling
    /// that alone would loop forever on a write larger than twice it.
    private func grow() throws {
        try gate.exclusively {
            let ours = info().mapSize
            try check(mdb_env_set_mapsize(pointer, 0), "mdb_env_set_mapsize")
            let committed = info().mapSize
            try check(mdb_env_set_mapsize(pointer, max(ours, committed) * 2), "mdb_env_set_mapsize")
        }
    }

    // MARK: Introspection

    /// The map's size and use, from `mdb_env_info` and `mdb_env_stat`.
    public func info() -> EnvironmentInfo {
        var info = MDB_envinfo()
        mdb_env_info(pointer, &info)
        var stat = MDB_stat()
        mdb_env_stat(pointer, &stat)
        return EnvironmentInfo(
            mapSize: info.me_mapsize,
            pageSize: Int(stat.ms_psize),
            lastPage: info.me_last_pgno,
            lastTransaction: info.me_last_txnid,
            maxReaders: Int(info.me_maxreaders),
            readersUsed: Int(info.me_numreaders)
        )
    }

    /// Clears reader slots left by processes that died (`mdb_reader_check`);
    /// returns how many it cleared.
    @discardableResult
    public func clearStaleReaders() throws -> Int {
        var dead: Int32 = 0
        try check(mdb_reader_check(pointer, &dead), "mdb_reader_check")
        return Int(dead)
    }

    /// Flushes to disk (`mdb_env_sync` with force): what ``Durability/noSync``
    /// left unwritten is durable after it returns.
    public func sync() throws {
        try check(mdb_env_sync(pointer, 1), "mdb_env_sync")
    }

    /// Writes a consistent copy of the whole environment to directory `path`
    /// (`mdb_env_copy2` with `MDB_CP_COMPACT`), without stopping writers.
    public func copy(to path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try check(mdb_env_copy2(pointer, path, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2(\(path))")
    }
}

/// The size and use of an environment's map and reader table.
public struct EnvironmentInfo: Sendable, Equatable {
    public var mapSize: Int
    public var pageSize: Int
    public var lastPage: Int
    public var lastTransaction: Int
    public var maxReaders: Int
    public var readersUsed: Int
    /// Bytes of the map in use: pages up to the last used one.
    public var usedBytes: Int { (lastPage + 1) * pageSize }
}

/// The paths this process has open, so that none is opened twice (LMDB's
/// locks are per process: a second `MDB_env` on the same files breaks them).
final class OpenEnvironments: @unchecked Sendable {
    static let shared = OpenEnvironments()
    private let lock = NSLock()
    private var paths = Set<String>()

    func claim(_ path: String) throws {
        lock.lock()
        defer { lock.unlock() }
        guard paths.insert(path).inserted else { throw EnvironmentAlreadyOpenError(path: path) }
    }

    func release(_ path: String) {
        lock.lock()
        paths.remove(path)
        lock.unlock()
    }
}

/// Opening an environment that this process already has open.
public struct EnvironmentAlreadyOpenError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var description: String {
        "the LMDB environment at \(path) is already open in this process; share the open one instead of opening it twice"
    }
}
