import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What LMDB's lock file (`lock.mdb`) says about who has an environment
/// open, read from outside LMDB.
///
/// Every process that opens an environment with its lock file holds a
/// shared `fcntl` lock on byte 0 of `lock.mdb` until it closes it (LMDB's
/// `mdb_env_excl_lock` and `mdb_env_share_locks`; the first opener holds it
/// exclusively while it resets the reader table). So a process that does
/// not have the environment open can ask the kernel (`F_GETLK`) whether
/// any other process has: this sees every LMDB user, also those that do
/// not take ``DirectoryLock`` (`mdb_stat`, Python's `lmdb`).
///
/// Never ask while this process has the environment open: POSIX drops all
/// of a process's `fcntl` locks on a file when any descriptor of it is
/// closed, so the probe's `close` would drop LMDB's own lock.
enum LockFile {
    static let name = "lock.mdb"

    /// The pid of a process that holds LMDB's lock on `directory/lock.mdb`
    /// (has the environment open); nil when none does or there is no lock
    /// file. 0 when the kernel does not say which process it is.
    static func otherUser(in directory: String) -> pid_t? {
        holder(in: directory, conflictingWith: F_WRLCK)
    }

    /// The pid of a process that holds LMDB's lock on `directory/lock.mdb`
    /// *exclusively*: the first opener of an environment, which holds it
    /// from before it creates `data.mdb` until its meta pages are written
    /// (`mdb_env_excl_lock` … `mdb_env_share_locks`). Nil when none does.
    /// Same caveat as ``otherUser(in:)``: never ask while this process has
    /// the environment open.
    static func creator(in directory: String) -> pid_t? {
        holder(in: directory, conflictingWith: F_RDLCK)   // a read lock conflicts only with an exclusive one
    }

    /// `F_GETLK` on byte 0 of `directory/lock.mdb`: who holds a lock that
    /// one of `type` would conflict with.
    private static func holder(in directory: String, conflictingWith type: Int32) -> pid_t? {
        guard let fd = try? RegularFile.open((directory as NSString).appendingPathComponent(name), O_RDONLY) else { return nil }
        defer { close(fd) }
        var probe = flock()
        probe.l_type = Int16(type)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 1
        guard fcntl(fd, F_GETLK, &probe) == 0 else { return nil }
        return probe.l_type == Int16(F_UNLCK) ? nil : probe.l_pid
    }

    /// The size LMDB gives a new lock file (`mdb_env_setup_locks`: the
    /// `MDB_txninfo` header with one reader, 192 bytes on 64-bit Linux, and
    /// 64 bytes for each further reader slot).
    static func size(maxReaders: UInt32) -> Int { Int(maxReaders - 1) * 64 + 192 }

    /// Makes sure every block of `directory/lock.mdb` is allocated on disk
    /// before LMDB maps it (`posix_fallocate`): a new one is created at the
    /// size LMDB would give it, an existing one has its holes filled.
    ///
    /// Why: LMDB sizes the lock file with `ftruncate`, which allocates
    /// nothing, then writes its reader table through a shared map. On a full
    /// filesystem the first write to an unallocated page of that map is a
    /// SIGBUS (seen on tmpfs, in `replay --verify`'s scratch environment
    /// after a write had filled the disk). Allocated here, a full disk is
    /// ``DiskFullError`` before anything is mapped.
    ///
    /// Call only while this process does not have the environment open
    /// (closing a descriptor of the file drops the process's `fcntl` locks
    /// on it): ``Environment`` calls it before `mdb_env_open`. A lock file
    /// that is not a regular file (a FIFO would block LMDB's open) throws
    /// ``NotARegularFileError``; failures other than a full disk are left
    /// for LMDB's own open to report.
    static func preallocate(in directory: String, maxReaders: UInt32, mode: mode_t) throws {
        let path = (directory as NSString).appendingPathComponent(name)
        let opened: Int32?
        do {
            opened = try RegularFile.open(path, O_RDWR | O_CREAT, mode: mode)
        } catch is LMDBError {
            return   // LMDB's own open says what is wrong
        }
        guard let fd = opened else { return }
        StoreOwner.adopt(path)
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return }
        let length = status.st_size > 0 ? status.st_size : off_t(size(maxReaders: maxReaders))
        let result = posix_fallocate(fd, 0, length)
        if result == ENOSPC || result == EDQUOT {
            throw DiskFullError.classify(LMDBError(code: result, call: "posix_fallocate(\(path))"), at: directory)
        }
    }
}
