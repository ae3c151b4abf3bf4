import CLMDB
import Foundation

/// An LMDB environment: one directory holding `data.mdb` and `lock.mdb`,
/// shared by every process that opens it.
///
/// Transactions are scoped to a closure so that none outlives its use:
///
/// ```swift
/// let env = try Environment(path: dir)
/// let db = try env.write { txn in try txn.createDatabase("log", as: UInt64.self, [UInt8].self) }
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
/// - **Compaction** (``compact(path:options:beforeSwap:progress:)``) rewrites
///   the data file while no process has the environment open: every
///   environment holds its directory's shared lock (``DirectoryLock``).
/// - **Closing** (``close(throwingAfterwards:)``) waits for the transactions
///   of the process to end, closes the `MDB_env` and lets go of the path and
///   the directory's lock, so the directory can be opened again or compacted
///   in the same process; every later transaction throws instead of
///   touching the closed handle.
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
    private let writer = WriterThread()
    /// The directory's shared lock (``DirectoryLock``), held until the
    /// environment is closed; nil for a compaction's own opens and where the
    /// directory cannot be locked, and once closed. Changed only by
    /// ``close(throwingAfterwards:)``, inside the gate's lock.
    private var directoryLock: DirectoryLock?
    /// What ``info()`` answers once the environment is closed.
    private var infoAtClose: EnvironmentInfo?
    private let ownsClaim: Bool
    /// Writers of every process exclude each other through `data.mdb` too,
    /// and refuse a replaced `lock.mdb` (``WriterExclusion``).
    private let exclusion: WriterExclusion

    /// Opens (creating when needed) the environment in directory `path`.
    /// Calls `mdb_env_create`, `mdb_env_set_mapsize`, `mdb_env_set_maxreaders`,
    /// `mdb_env_set_maxdbs`, `mdb_env_open` and `mdb_reader_check`.
    ///
    /// With ``EnvironmentOptions/readOnly`` (`MDB_RDONLY`), nothing is created
    /// and no write transaction can begin. LMDB still writes its lock file to
    /// take a reader slot; where it cannot (a read-only filesystem, or a
    /// directory this user may only read), the environment reads without it
    /// (``readsWithoutLock``).
    ///
    /// Every environment holds its directory's shared lock (``DirectoryLock``)
    /// while open, so that a compaction never runs under it; while one runs,
    /// the open throws ``EnvironmentBusyError``. An open for writing removes
    /// what a killed compaction left (its temporary copy).
    public convenience init(path: String, options: EnvironmentOptions = EnvironmentOptions()) throws {
        // Bytes end to end: no Foundation URL, which decodes the working directory's path lossily (``StorePath``).
        if !options.readOnly { try StorePath.createDirectory(path, mode: mode_t(options.directoryMode)) }
        let resolved = StorePath.resolved(path)
        try OpenEnvironments.shared.claim(resolved)
        let lock: DirectoryLock?
        do {
            lock = try DirectoryLock.shared(resolved)
        } catch {
            OpenEnvironments.shared.release(resolved)
            throw error
        }
        // Holding the shared lock, no compaction runs: a compaction's
        // temporary file is what a killed one left behind.
        if !options.readOnly && lock != nil { Self.removeAbandonedCompaction(in: resolved) }
        try self.init(resolved: resolved, options: options, directoryLock: lock, ownsClaim: true)
    }

    /// Opens the environment at `resolved`, a path already resolved (and,
    /// when `ownsClaim`, already claimed in ``OpenEnvironments``, released
    /// on failure and at close). `extraFlags` adds `mdb_env_open` flags: a
    /// compaction opens its copy with `MDB_NOSUBDIR | MDB_NOLOCK`.
    init(resolved: String, options: EnvironmentOptions, extraFlags: UInt32 = 0, directoryLock: DirectoryLock?,
         ownsClaim: Bool) throws {
        var flags = UInt32(MDB_NOTLS) | options.durability.environmentFlags | extraFlags
        if options.readOnly { flags |= UInt32(MDB_RDONLY) }
        var env: OpaquePointer
        var lockless = extraFlags & UInt32(MDB_NOLOCK) != 0
        let dataFile = extraFlags & UInt32(MDB_NOSUBDIR) != 0 ? resolved : (resolved as NSString).appendingPathComponent("data.mdb")
        do {
            // Before LMDB maps the files: a data file cut short or not LMDB's is an
            // error, not a SIGBUS; so is a lock file LMDB could not fill on a full disk.
            try Self.checkHeader(of: dataFile, in: resolved, lockless: lockless)
            if !lockless { try LockFile.preallocate(in: resolved, maxReaders: options.maxReaders, mode: mode_t(options.fileMode)) }
            do {
                env = try Self.open(resolved, flags: flags, options: options)
            } catch let error as LMDBError where options.readOnly && error.code == EACCES && !lockless {
                // lock.mdb can be neither opened for writing nor created: read
                // without it (`MDB_NOLOCK`), as LMDB does by itself on a
                // read-only filesystem. Without a reader slot, a writer may
                // reuse the pages being read, so this is safe only while no
                // process writes the store: an audit copy (Docs/Architecture.md).
                env = try Self.open(resolved, flags: flags | UInt32(MDB_NOLOCK), options: options)
                lockless = true
            }
        } catch {
            if ownsClaim { OpenEnvironments.shared.release(resolved) }
            // Creating the file writes its meta pages: a full disk says so.
            throw DiskFullError.classify(error, at: resolved)
        }
        // What LMDB created (data.mdb) takes the directory's owner (a root process in a service's store).
        if !options.readOnly && extraFlags & UInt32(MDB_NOSUBDIR) == 0 { StoreOwner.adopt(dataFile) }
        self.pointer = env
        self.path = resolved
        self.options = options
        self.directoryLock = directoryLock
        self.ownsClaim = ownsClaim
        self.readsWithoutLock = lockless || (options.readOnly && Self.isOnReadOnlyFilesystem(resolved))
        var descriptor: Int32 = -1
        mdb_env_get_fd(env, &descriptor)
        exclusion = WriterExclusion(descriptor: descriptor, directory: resolved,
                                    hasLockFile: !readsWithoutLock && extraFlags & UInt32(MDB_NOSUBDIR) == 0)
        // Before any other transaction: every page in use, once. (Thrown
        // from here, the environment is closed and released by `deinit`.)
        try gate.enterShared()
        defer { gate.leaveShared() }
        try PageCheck.walk(env, file: dataFile) { try beginReading() }
    }

    /// ``PageCheck/header(of:)``, waiting while another process creates the
    /// file. Until that process's `mdb_env_open` has written the two meta
    /// pages, `data.mdb` is empty or ends inside them, which would read as
    /// "cut short"; LMDB's own openers wait for the creator's exclusive lock
    /// on `lock.mdb` (`mdb_env_excl_lock`), and so does this check, at most
    /// ``creationWait``. A file that ends inside its meta pages while nobody
    /// holds that lock is damaged, and says so at once.
    private static func checkHeader(of dataFile: String, in directory: String, lockless: Bool) throws {
        let deadline = DispatchTime.now() + creationWait
        while true {
            do {
                _ = try PageCheck.header(of: dataFile)
                return
            } catch let error as DamagedFileError {
                guard !lockless, case .cutShort(_, nil, _) = error.problem,
                      LockFile.creator(in: directory) != nil, DispatchTime.now() < deadline else { throw error }
                usleep(2_000)
            }
        }
    }

    /// How long an open waits for another process to finish creating the
    /// data file (microseconds of work, longer only on a stalled disk).
    static let creationWait = DispatchTimeInterval.seconds(10)

    /// `mdb_env_create` … `mdb_env_open`, then `mdb_reader_check`; the handle is
    /// closed again when any of them fails.
    private static func open(_ path: String, flags: UInt32, options: EnvironmentOptions) throws -> OpaquePointer {
        var handle: OpaquePointer?
        try check(mdb_env_create(&handle), "mdb_env_create")
        guard let env = handle else { throw LMDBError(code: ENOMEM, call: "mdb_env_create") }
        do {
            try check(mdb_env_set_mapsize(env, options.mapSize), "mdb_env_set_mapsize")
            try check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders")
            try check(mdb_env_set_maxdbs(env, options.maxDatabases), "mdb_env_set_maxdbs")
            try check(mdb_env_open(env, path, flags, mdb_mode_t(options.fileMode)), "mdb_env_open(\(path))")
            var dead: Int32 = 0
            try check(mdb_reader_check(env, &dead), "mdb_reader_check")
            return env
        } catch {
            mdb_env_close(env)
            throw error
        }
    }

    /// `statvfs` says `ST_RDONLY`: LMDB then opens a read-only environment
    /// without its lock file.
    private static func isOnReadOnlyFilesystem(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && (info.f_flag & UInt(ST_RDONLY)) != 0
    }

    /// True when this read-only environment takes no reader slot in
    /// `lock.mdb` (it could not write it): consistent only while no process
    /// writes the store.
    public let readsWithoutLock: Bool

    deinit {
        if gate.closed == nil {
            mdb_env_close(pointer)
            if ownsClaim { OpenEnvironments.shared.release(path) }
        }
        // `directoryLock` is released after this, once the environment is closed.
    }

    /// Closes the environment (`mdb_env_close`) once every transaction of
    /// this process has ended (it waits for them; none may be open on the
    /// calling thread), then lets go of the path (it may be opened again in
    /// this process) and of the directory's lock (it may be compacted).
    /// Afterwards every transaction, and every call that needs the handle,
    /// throws `error` (``EnvironmentClosedError`` when nil). Closing twice
    /// does nothing. An environment that is never closed closes when its
    /// last reference goes.
    ///
    /// ```swift
    /// try env.close()
    /// try env.read { _ in }   // throws EnvironmentClosedError
    /// ```
    public func close(throwingAfterwards error: (any Error)? = nil) {
        let closedError = error ?? EnvironmentClosedError(path: path)
        _ = gate.close(closedError) {
            infoAtClose = rawInfo()
            mdb_env_close(pointer)
            if ownsClaim { OpenEnvironments.shared.release(path) }
            directoryLock = nil   // its descriptor closes: the flock goes
        }
    }

    /// True once ``close(throwingAfterwards:)`` ran.
    public var isClosed: Bool { gate.closed != nil }

    /// Runs `body`, which uses the handle outside a transaction, unless the
    /// environment is closed (then it throws what closing named).
    func whileOpen<R>(_ body: () throws -> R) throws -> R {
        try gate.enterShared()
        defer { gate.leaveShared() }
        return try body()
    }

    // MARK: Transactions

    /// Runs `body` in a read-only transaction (`mdb_txn_begin` with
    /// `MDB_RDONLY`), which sees the last commit made before it began and
    /// nothing after. The transaction ends when `body` returns.
    ///
    /// When every reader slot is taken (``EnvironmentOptions/maxReaders``),
    /// slots of dead processes are cleared (`mdb_reader_check`) and the begin
    /// is tried once more; then it throws ``LMDBError/readersFull``.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try read(adoptingResize: true, body)
    }

    /// ``read(_:)``, except that when another process grew the map since
    /// this one last adopted it, it throws ``LMDBError/mapResized`` instead
    /// of adopting the new size, which waits until every transaction of this
    /// process has ended. For a helper thread whose caller holds a
    /// transaction while it waits for the helper: adopting there would wait
    /// for the caller, which waits for it.
    public func readUnlessResized<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try read(adoptingResize: false, body)
    }

    private func read<R>(adoptingResize: Bool, _ body: (ReadTransaction) throws -> R) throws -> R {
        try exclusion.checkLockFileForReading()
        try gate.enterShared()
        defer { gate.leaveShared() }
        let txn = try ReadTransaction(environment: self, begin: beginReading(adoptingResize: adoptingResize))
        defer { txn.abortIfOpen() }
        return try body(txn)
    }

    private func beginReading(adoptingResize: Bool = true) throws -> OpaquePointer {
        func begin() throws -> OpaquePointer {
            guard adoptingResize else { return try beginTransaction(parent: nil, flags: UInt32(MDB_RDONLY)) }
            return try beginAdoptingResize(parent: nil, flags: UInt32(MDB_RDONLY))
        }
        do {
            return try begin()
        } catch LMDBError.readersFull {
            if try clearStaleReaders() > 0 {
                if let txn = try? begin() { return txn }
            }
            throw LMDBError(code: MDB_READERS_FULL, call: "mdb_txn_begin(\(path))",
                            hint: "all \(info().maxReaders) reader slots are taken by open read transactions of live processes; "
                                + "end some, or open the store with more (maxReaders)")
        }
    }

    /// Runs `body` in a transaction that may only open databases, and keeps
    /// the handles it opened (`mdb_txn_commit`): what a read-only environment
    /// needs to open typed databases, where no write transaction can begin.
    ///
    /// On a writable environment it is a write transaction. On a read-only
    /// one it is an `MDB_RDONLY` transaction underneath:
    /// ``WriteTransaction/createDatabase(_:as:_:flags:)`` opens existing
    /// databases only (a missing one throws ``LMDBError/notFound``) and LMDB
    /// refuses any write in it (`EACCES`). So an opener such as a projection
    /// set's `init(openingIn:)`, which only opens, works on both.
    public func openDatabases<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        guard options.readOnly else { return try write(body) }
        try exclusion.checkLockFileForReading()
        try gate.enterShared()
        defer { gate.leaveShared() }
        let txn = WriteTransaction(environment: self, begin: try beginReading(), opensOnly: true)
        defer { txn.abortIfOpen() }
        let result = try body(txn)
        try txn.commit()
        return result
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
    ///
    /// Writers of every process exclude each other through `lock.mdb` (LMDB)
    /// and `data.mdb` (``WriterExclusion``); a process whose `lock.mdb` was
    /// replaced throws ``LockFileReplacedError``. A full filesystem throws
    /// ``DiskFullError``.
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        while true {
            do {
                return try writeOnce(body)
            } catch LMDBError.mapFull {
                try grow()
            } catch {
                throw DiskFullError.classify(error, at: path)
            }
        }
    }

    private func writeOnce<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        writer.enter(path)
        defer { writer.leave() }
        try exclusion.acquire()
        defer { exclusion.release() }
        try gate.enterShared()
        defer { gate.leaveShared() }
        let txn = try WriteTransaction(environment: self, begin: beginAdoptingResize(parent: nil, flags: 0))
        writer.held()
        defer { txn.abortIfOpen() }
        let result = try body(txn)
        if let observer = options.commitObserver {
            let start = DispatchTime.now().uptimeNanoseconds
            try txn.commit()
            observer(DispatchTime.now().uptimeNanoseconds - start)
        } else {
            try txn.commit()
        }
        return result
    }

    /// `mdb_txn_begin`; a map another process grew is ``LMDBError/mapResized``.
    private func beginTransaction(parent: OpaquePointer?, flags: UInt32) throws -> OpaquePointer {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(pointer, parent, flags, &txn), "mdb_txn_begin")
        return txn!
    }

    /// `mdb_txn_begin`, adopting a map that another process grew.
    private func beginAdoptingResize(parent: OpaquePointer?, flags: UInt32) throws -> OpaquePointer {
        while true {
            do {
                return try beginTransaction(parent: parent, flags: flags)
            } catch LMDBError.mapResized {
                gate.leaveShared()
                let adopted = Result {
                    try gate.exclusively { try check(mdb_env_set_mapsize(pointer, 0), "mdb_env_set_mapsize") }
                }
                // The caller leaves the gate once: enter again whatever happened.
                gate.reenterShared()
                if let closed = gate.closed { throw closed }
                try adopted.get()
            }
        }
    }

    /// Doubles the map (`mdb_env_set_mapsize`) once no transaction of this
    /// process is open, starting from the larger of this process's size and
    /// the committed one (another process may have grown it). Size 0 adopts
    /// the committed size, which lags ours until a grown write commits: doubling
    /// that alone would loop forever on a write larger than twice it.
    private func grow() throws {
        try gate.exclusively {
            let ours = rawInfo().mapSize
            try check(mdb_env_set_mapsize(pointer, 0), "mdb_env_set_mapsize")
            let committed = rawInfo().mapSize
            try check(mdb_env_set_mapsize(pointer, max(ours, committed) * 2), "mdb_env_set_mapsize")
        }
    }

    // MARK: Introspection

    /// The map's size and use, from `mdb_env_info` and `mdb_env_stat`.
    public func info() -> EnvironmentInfo {
        (try? whileOpen { rawInfo() }) ?? infoAtClose ?? EnvironmentInfo(mapSize: 0, pageSize: 0, lastPage: 0, lastTransaction: 0,
                                                                          maxReaders: 0, readersUsed: 0)
    }

    private func rawInfo() -> EnvironmentInfo {
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
        try whileOpen {
            var dead: Int32 = 0
            try check(mdb_reader_check(pointer, &dead), "mdb_reader_check")
            return Int(dead)
        }
    }

    /// Flushes to disk (`mdb_env_sync` with force): what ``Durability/noSync``
    /// left unwritten is durable after it returns.
    public func sync() throws {
        try whileOpen {
            do {
                try check(mdb_env_sync(pointer, 1), "mdb_env_sync")
            } catch {
                throw DiskFullError.classify(error, at: path)
            }
        }
    }

    /// Writes a consistent copy of the whole environment to directory `path`
    /// (`mdb_env_copy2` with `MDB_CP_COMPACT`), without stopping writers.
    public func copy(to path: String) throws {
        try StorePath.createDirectory(path, mode: mode_t(options.directoryMode))
        try whileOpen { try check(mdb_env_copy2(pointer, path, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2(\(path))") }
    }
}

/// Which thread of this process holds the environment's write transaction,
/// so that a second `write` on that thread traps with a message instead of
/// waiting for LMDB's writer lock, which it holds itself, forever.
final class WriterThread: @unchecked Sendable {
    private let lock = NSLock()
    private var holder: pthread_t?

    func enter(_ path: String) {
        lock.lock()
        let reentered = holder.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        lock.unlock()
        if reentered {
            fatalError("Environment.write(\(path)) was called inside a write transaction on the same thread: "
                + "LMDB allows one write transaction at a time, so this one would wait for itself forever. "
                + "Use the transaction you have (or WriteTransaction.nested).")
        }
        // Set once this thread has LMDB's writer lock; other threads wait there, not here.
    }

    func held() {
        lock.lock()
        holder = pthread_self()
        lock.unlock()
    }

    func leave() {
        lock.lock()
        if let holder, pthread_equal(holder, pthread_self()) != 0 { self.holder = nil }
        lock.unlock()
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
    /// By bytes: two paths that differ in one byte are two directories.
    private var paths = Set<Name>()

    func claim(_ path: String) throws {
        lock.lock()
        defer { lock.unlock() }
        guard paths.insert(Name(path)).inserted else { throw EnvironmentAlreadyOpenError(path: path) }
    }

    func release(_ path: String) {
        lock.lock()
        paths.remove(Name(path))
        lock.unlock()
    }
}

/// A transaction (or a call that needs the handle) on an environment that
/// was closed (``Environment/close(throwingAfterwards:)``).
public struct EnvironmentClosedError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The environment's directory.
    public var path: String

    public init(path: String) { self.path = path }

    public var description: String {
        "the LMDB environment at \(path) is closed; open it again to use it"
    }
}

/// Opening an environment that this process already has open.
public struct EnvironmentAlreadyOpenError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var description: String {
        "the LMDB environment at \(path) is already open in this process; share the open one instead of opening it twice"
    }
}
