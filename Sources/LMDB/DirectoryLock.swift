import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock on an environment's directory (`flock(2)` on the
/// directory itself, opened `O_RDONLY | O_DIRECTORY | O_CLOEXEC`): every
/// ``Environment`` of this package holds it shared from before
/// `mdb_env_open` until after `mdb_env_close`, and a compaction
/// (``Environment/compact(path:options:beforeSwap:progress:)``) holds it
/// exclusively from start to end. So a compaction starts only when no
/// process of this package has the environment open, reading or writing,
/// and no process opens it until the compaction is over.
///
/// A lock on the directory rather than on `data.mdb` (which compaction
/// replaces: a lock on the old inode would not stop openers of the new
/// one) or on `lock.mdb` (whose `fcntl` locks are LMDB's, and which POSIX
/// drops when any descriptor of the file in the process is closed). It
/// needs no file of its own and no write access: a reader of a read-only
/// directory takes it too. The kernel drops it when the process dies, so a
/// killed compaction never leaves the store locked.
final class DirectoryLock {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)   // releases the flock
    }

    /// The shared lock of an opener. Throws ``EnvironmentBusyError`` when a
    /// compaction holds the directory; nil when the directory cannot be
    /// opened or locked at all (a filesystem without `flock`, a directory
    /// this user may not read): the opener then goes on without it.
    static func shared(_ path: String) throws -> DirectoryLock? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        if flockRetryingInterrupts(fd, LOCK_SH | LOCK_NB) == 0 { return DirectoryLock(descriptor: fd) }
        let error = errno
        close(fd)
        if error == EWOULDBLOCK {
            throw EnvironmentBusyError(path: path, reason: .compacting)
        }
        return nil
    }

    /// The exclusive lock of a compaction, without waiting: throws
    /// ``EnvironmentBusyError`` when a process has the environment open.
    static func exclusive(_ path: String) throws -> DirectoryLock {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw LMDBError(code: errno, call: "open(\(path))") }
        guard flockRetryingInterrupts(fd, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            close(fd)
            if error == EWOULDBLOCK {
                throw EnvironmentBusyError(path: path, reason: .openElsewhere(pid: LockFile.otherUser(in: path)))
            }
            throw LMDBError(code: error, call: "flock(\(path), LOCK_EX)")
        }
        return DirectoryLock(descriptor: fd)
    }

    /// Flushes the directory's entries (`fsync` on the directory): after a
    /// rename in it, the new name survives a machine crash.
    func syncDirectory(_ path: String) throws {
        guard fsync(descriptor) == 0 else { throw LMDBError(code: errno, call: "fsync(\(path))") }
    }

    private static func flockRetryingInterrupts(_ fd: Int32, _ operation: Int32) -> Int32 {
        while true {
            let result = flock(fd, operation)
            if result == 0 || errno != EINTR { return result }
        }
    }
}
