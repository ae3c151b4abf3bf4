import CLMDB
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Environment {
    /// The name of a compaction's temporary copy, beside `data.mdb`. LMDB
    /// opens `data.mdb` only, so the copy is never taken for the store.
    public static let compactionCopyName = "data.mdb.compacting"

    /// Writes a compacted copy of the environment to the open file
    /// `descriptor` (`mdb_env_copyfd2` with `MDB_CP_COMPACT`), as of one
    /// read transaction.
    ///
    /// LMDB walks every database's B-tree and writes the pages in use,
    /// renumbered from page 2, each copied by its used parts only: free
    /// pages (and the freelist) are left out, and so is the unused middle of
    /// each page, where a deleted entry's bytes can linger. The copy's meta
    /// pages are new (meta page 1 holds the main database with transaction
    /// id 1, meta page 0 is empty with id 0), and its map size is this
    /// environment's. LMDB writes with `write(2)` from a thread of its own
    /// and does not sync: the caller syncs the file.
    public func copyCompacted(toDescriptor descriptor: Int32) throws {
        try gate.enterShared()
        defer { gate.leaveShared() }
        do {
            try check(mdb_env_copyfd2(pointer, descriptor, UInt32(MDB_CP_COMPACT)), "mdb_env_copyfd2(\(path), MDB_CP_COMPACT)")
        } catch {
            // The copy is written beside data.mdb: a full disk says so.
            throw DiskFullError.classify(error, at: path)
        }
    }

    /// Rewrites the environment in directory `path` with LMDB's compacting
    /// copy (``copyCompacted(toDescriptor:)``) and swaps the copy in for
    /// `data.mdb`, so that the file holds the data in use and nothing else:
    /// no free page keeps the bytes of deleted or overwritten entries.
    ///
    /// ```swift
    /// let report = try Environment.compact(path: "/var/lib/app/store", beforeSwap: { old, copy in
    ///     // compare what matters in `old` and `copy`; throwing keeps the old file
    /// })
    /// print(report.bytesBefore, report.bytesAfter)
    /// ```
    ///
    /// The environment must be closed in every process: the compaction takes
    /// the directory's lock (``DirectoryLock``) exclusively, without waiting,
    /// and asks the kernel whether any other process holds LMDB's lock on
    /// `lock.mdb` (``LockFile``); either way it throws
    /// ``EnvironmentBusyError``, and while it runs, opens throw it. Why not
    /// beside readers: a reader keeps the old file mapped and would read it,
    /// stale, forever; and while any process has `lock.mdb` open, LMDB does
    /// not reset its reader table, whose transaction id (the old file's)
    /// would then pick the wrong meta page of the new file (id 1), for
    /// readers and writers alike.
    ///
    /// Steps (``CompactionStep``): lock; remove a copy that a killed
    /// compaction left; open the old file read-only; write the copy to
    /// ``compactionCopyName`` in the same directory (created `O_EXCL`, with
    /// the old file's owner and mode), zero what in it is not data in use
    /// (``zeroStaleBytes(writingTo:file:)``: overflow pages' tails and pages'
    /// free middles, where the copy carries old bytes), `fsync` it; open the copy (read-only,
    /// `MDB_NOSUBDIR | MDB_NOLOCK`) and run `beforeSwap` with both; close
    /// both; rename the copy over `data.mdb` (atomic) and `fsync` the
    /// directory; open the new file once, alone, which makes LMDB reset the
    /// lock table (`mdb_env_setup_locks`) to the new file's transaction id,
    /// and check that it did. A crash anywhere leaves `data.mdb` whole, the
    /// old or the new one; a failure before the rename removes the copy and
    /// leaves the old file untouched.
    ///
    /// Not covered: a program that opens the files without this package
    /// (`mdb_stat`, Python's `lmdb`) between the last check of `lock.mdb`
    /// and the rename; do not run such tools during a compaction.
    ///
    /// - Parameters:
    ///   - beforeSwap: runs with the old environment and the copy, both
    ///     open read-only, before the swap; throwing abandons the copy. It
    ///     must not keep either environment.
    ///   - progress: each step, and the copy's growth every 100 ms while
    ///     it is written (from another thread).
    @discardableResult
    public static func compact(path: String, options: EnvironmentOptions = EnvironmentOptions(),
                               beforeCopy: ((_ environment: Environment) throws -> Void)? = nil,
                               beforeSwap: (_ old: Environment, _ copy: Environment) throws -> Void,
                               progress: (@Sendable (CompactionProgress) -> Void)? = nil) throws -> CompactionReport {
        let started = DispatchTime.now().uptimeNanoseconds
        let resolved = StorePath.resolved(path)
        let dataFile = (resolved as NSString).appendingPathComponent("data.mdb")
        let copyFile = (resolved as NSString).appendingPathComponent(compactionCopyName)
        var before = stat()
        guard stat(dataFile, &before) == 0 else { throw LMDBError(code: errno, call: "stat(\(dataFile))") }

        // No environment of this process on the path (LMDB forbids two, and
        // the probes of lock.mdb below must not close a descriptor of ours).
        try OpenEnvironments.shared.claim(resolved)
        defer { OpenEnvironments.shared.release(resolved) }
        let lock = try DirectoryLock.exclusive(resolved)
        defer { withExtendedLifetime(lock) {} }   // held to the end, past its last use
        try checkNoOtherUser(resolved)
        let removedLeftover = removeAbandonedCompaction(in: resolved)
        // The caller's writes while it holds the environment alone (the
        // records rewritten compact), in an open of its own, closed before the copy.
        if let beforeCopy {
            var writeOptions = options
            writeOptions.readOnly = false
            let writable = try Environment(resolved: resolved, options: writeOptions, directoryLock: nil, ownsClaim: false)
            do {
                try beforeCopy(writable)
            } catch {
                writable.close()
                throw error
            }
            writable.close()
        }

        var readOptions = options
        readOptions.readOnly = true
        var old: Environment? = try Environment(resolved: resolved, options: readOptions, directoryLock: nil, ownsClaim: false)
        let expected = old!.info().usedBytes
        func report(_ step: CompactionStep, _ written: Int) {
            progress?(CompactionProgress(step: step, bytesWritten: written, bytesExpected: expected))
        }
        report(.locked, 0)

        var swapped = false
        defer { if !swapped { unlink(copyFile) } }
        let (written, zeroed) = try writeCopy(of: old!, to: copyFile, like: before, expected: expected, options: readOptions,
                                              progress: progress)
        do {
            let copy = try Environment(resolved: copyFile, options: readOptions, extraFlags: UInt32(MDB_NOSUBDIR | MDB_NOLOCK),
                                       directoryLock: nil, ownsClaim: false)
            try beforeSwap(old!, copy)
        }
        report(.checked, written)
        old = nil   // closed: the probe below may open and close lock.mdb

        try checkNoOtherUser(resolved)
        guard rename(copyFile, dataFile) == 0 else { throw LMDBError(code: errno, call: "rename(\(copyFile), \(dataFile))") }
        swapped = true
        report(.swapped, written)
        try lock.syncDirectory(resolved)
        report(.durable, written)

        // Alone (the directory lock keeps this package's openers out), this
        // open is LMDB's exclusive one, which resets the lock table; a read
        // transaction then sees the table's id, which must be the file's.
        let reopened = try Environment(resolved: resolved, options: readOptions, directoryLock: nil, ownsClaim: false)
        let tableID = try reopened.read { $0.id }
        let fileID = reopened.info().lastTransaction
        guard tableID == fileID else {
            throw LMDBError(code: MDB_BAD_TXN, call: "compact(\(resolved))",
                            hint: "another program opened the store during the compaction (lock.mdb's transaction id \(tableID), "
                                + "the new data file's \(fileID)); stop every process that has it open before it is opened again")
        }
        report(.reopened, written)
        var after = stat()
        let bytesAfter = stat(dataFile, &after) == 0 ? Int(after.st_size) : written
        return CompactionReport(path: resolved, bytesBefore: Int(before.st_size), bytesAfter: bytesAfter,
                                bytesZeroed: zeroed, removedLeftover: removedLeftover,
                                seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
    }

    /// Removes the temporary copy a killed compaction left in `directory`;
    /// true when there was one. Only while holding the directory's lock
    /// (shared or exclusive): then no compaction is writing it.
    @discardableResult
    static func removeAbandonedCompaction(in directory: String) -> Bool {
        unlink((directory as NSString).appendingPathComponent(compactionCopyName)) == 0
    }

    /// Throws ``EnvironmentBusyError`` when another process holds LMDB's
    /// lock on `lock.mdb`: one that opened the files without this package.
    private static func checkNoOtherUser(_ directory: String) throws {
        if let pid = LockFile.otherUser(in: directory) {
            throw EnvironmentBusyError(path: directory, reason: .openElsewhere(pid: pid))
        }
    }

    /// Writes the compacted copy of `environment` to a new file `target`
    /// with `like`'s owner and mode, zeroes its stale bytes
    /// (``zeroStaleBytes(writingTo:file:)``), syncs and closes it; returns
    /// its size and the bytes zeroed.
    private static func writeCopy(of environment: Environment, to target: String, like original: stat, expected: Int,
                                  options: EnvironmentOptions,
                                  progress: (@Sendable (CompactionProgress) -> Void)?) throws -> (size: Int, zeroed: Int) {
        let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, original.st_mode & 0o7777)
        guard fd >= 0 else { throw LMDBError(code: errno, call: "open(\(target))") }
        var isOpen = true
        defer { if isOpen { Glibc.close(fd) } }
        // The owner and mode of the old file: a compaction run as root must
        // not leave a service's store to root. (Without the privilege, the
        // copy is this user's, as the old file was.)
        _ = fchown(fd, original.st_uid, original.st_gid)
        _ = fchmod(fd, original.st_mode & 0o7777)
        progress?(CompactionProgress(step: .copying, bytesWritten: 0, bytesExpected: expected))
        let watcher = progress.map { CopyWatcher(descriptor: fd, expected: expected, report: $0) }
        do {
            try environment.copyCompacted(toDescriptor: fd)
        } catch {
            watcher?.stop()
            throw error
        }
        watcher?.stop()
        let zeroed = try Environment(resolved: target, options: options, extraFlags: UInt32(MDB_NOSUBDIR | MDB_NOLOCK),
                                     directoryLock: nil, ownsClaim: false)
            .zeroStaleBytes(writingTo: fd, file: target)
        var written = stat()
        let size = fstat(fd, &written) == 0 ? Int(written.st_size) : 0
        progress?(CompactionProgress(step: .copied, bytesWritten: size, bytesExpected: expected))
        guard fsync(fd) == 0 else { throw LMDBError(code: errno, call: "fsync(\(target))") }
        isOpen = false
        guard Glibc.close(fd) == 0 else { throw LMDBError(code: errno, call: "close(\(target))") }
        progress?(CompactionProgress(step: .synced, bytesWritten: size, bytesExpected: expected))
        return (size, zeroed)
    }
}

/// Reports the copy's size every 100 ms while LMDB writes it (the C call
/// blocks and says nothing until it is done).
private final class CopyWatcher: @unchecked Sendable {
    private let stopped = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(descriptor: Int32, expected: Int, report: @escaping @Sendable (CompactionProgress) -> Void) {
        Thread.detachNewThread { [self] in
            while stopped.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
                var info = stat()
                if fstat(descriptor, &info) == 0 {
                    report(CompactionProgress(step: .copying, bytesWritten: Int(info.st_size), bytesExpected: expected))
                }
            }
            finished.signal()
        }
    }

    /// Stops the reports and waits until the last one is done (the
    /// descriptor stays valid until then).
    func stop() {
        stopped.signal()
        finished.wait()
    }
}
