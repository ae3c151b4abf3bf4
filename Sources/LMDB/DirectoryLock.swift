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

    /// The shared lock of an opener (`open(2)` of the directory, then
    /// `flock(2)` `LOCK_SH | LOCK_NB`). Throws ``EnvironmentBusyError`` when a
    /// compaction holds the directory.
    ///
    /// Nil, so that the opener goes on without the lock, in two deliberate
    /// cases only, where going on cannot open a store under a compaction:
    /// - `open` fails with `EACCES`: a directory this user may search but not
    ///   read (mode `0711`, an audit copy). LMDB opens the files in it by
    ///   name and needs no read access to the directory; such a reader is
    ///   outside the lock, like `mdb_stat`, and is seen by a compaction only
    ///   through LMDB's lock on `lock.mdb` (when it can take one).
    /// - `flock` fails with `ENOLCK`, `EOPNOTSUPP` or `ENOSYS`: a filesystem
    ///   that does not lock (NFS without a lock manager returns `ENOLCK`;
    ///   some FUSE and network filesystems the others). There a compaction's
    ///   exclusive `flock` fails the same way, so no compaction runs at all.
    ///   (`flock(2)` also documents `ENOLCK` for a kernel out of lock records;
    ///   Linux's own `flock` reports that as `ENOMEM`, thrown below.)
    ///
    /// Every other failure throws an ``LMDBError`` naming the call
    /// (`open(PATH)` or `flock(PATH, LOCK_SH)`): out of descriptors
    /// (`EMFILE`, `ENFILE`), out of memory (`ENOMEM`), `EIO`, a path that is
    /// missing or not a directory (`ENOENT`, `ENOTDIR`), and anything not
    /// listed here. Going on without the lock then would be a store opened
    /// while a compaction may be replacing its file; `EINTR` is retried.
    ///
    /// ```swift
    /// let lock = try DirectoryLock.shared("/srv/events")  // held until released
    /// ```
    static func shared(_ path: String) throws -> DirectoryLock? {
        let fd = openRetryingInterrupts(path)
        guard fd >= 0 else {
            let error = errno
            if error == EACCES { return nil }
            throw LMDBError(code: error, call: "open(\(path))")
        }
        if flockRetryingInterrupts(fd, LOCK_SH | LOCK_NB) == 0 { return DirectoryLock(descriptor: fd) }
        let error = errno
        close(fd)
        switch error {
        case EWOULDBLOCK:
            throw EnvironmentBusyError(path: path, reason: .compacting)
        case ENOLCK, EOPNOTSUPP, ENOSYS:
            return nil
        default:
            throw LMDBError(code: error, call: "flock(\(path), LOCK_SH)")
        }
    }

    /// The exclusive lock of a compaction (`flock(2)` `LOCK_EX | LOCK_NB`):
    /// throws ``EnvironmentBusyError`` when a process has the environment
    /// open.
    ///
    /// It waits, briefly (``transientWait``), only while the lock is held by
    /// no process that has LMDB's lock on `lock.mdb` too: a holder of the
    /// directory alone is either a process between its directory lock and
    /// `mdb_env_open`, which soon holds both (then refused), or a child that
    /// some thread of a process holding the store is starting (`fork` or
    /// `posix_spawn`): until it calls `exec`, the child holds a copy of every
    /// descriptor, `O_CLOEXEC` ones too, and an `flock` lives as long as any
    /// copy. That copy is gone within milliseconds, and refusing for it
    /// would make a compaction fail at random beside a program that runs
    /// others (seen in the test suite, whose tests start `eventlog`).
    static func exclusive(_ path: String) throws -> DirectoryLock {
        let fd = openRetryingInterrupts(path)
        guard fd >= 0 else { throw LMDBError(code: errno, call: "open(\(path))") }
        let clock = ContinuousClock()
        let deadline = clock.now + transientWait
        while flockRetryingInterrupts(fd, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            guard error == EWOULDBLOCK else {
                close(fd)
                throw LMDBError(code: error, call: "flock(\(path), LOCK_EX)")
            }
            let holder = LockFile.otherUser(in: path)
            guard holder == nil, clock.now < deadline else {
                close(fd)
                throw EnvironmentBusyError(path: path, reason: .openElsewhere(pid: holder))
            }
            usleep(2_000)
        }
        return DirectoryLock(descriptor: fd)
    }

    /// How long ``exclusive(_:)`` tries again while the directory's holder
    /// has no LMDB lock (a child between `fork` and `exec`).
    static let transientWait = Duration.seconds(1)

    /// Flushes the directory's entries (`fsync` on the directory): after a
    /// rename in it, the new name survives a machine crash.
    func syncDirectory(_ path: String) throws {
        guard fsync(descriptor) == 0 else { throw LMDBError(code: errno, call: "fsync(\(path))") }
    }

    /// `open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)`, again after `EINTR`.
    private static func openRetryingInterrupts(_ path: String) -> Int32 {
        while true {
            let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd >= 0 || errno != EINTR { return fd }
        }
    }

    private static func flockRetryingInterrupts(_ fd: Int32, _ operation: Int32) -> Int32 {
        while true {
            let result = flock(fd, operation)
            if result == 0 || errno != EINTR { return result }
        }
    }
}
