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
        let fd = open((directory as NSString).appendingPathComponent(name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 1
        guard fcntl(fd, F_GETLK, &probe) == 0 else { return nil }
        return probe.l_type == Int16(F_UNLCK) ? nil : probe.l_pid
    }
}
