import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What makes writers of one environment exclude each other even when
/// `lock.mdb` is deleted under them.
///
/// LMDB's writer mutex lives in `lock.mdb`. Delete that file while a
/// process has the environment open, and the next process to open it
/// creates a new one, with a new mutex: two writers then write the same
/// pages at once, and acknowledged commits are lost (Docs/Reliability.md,
/// "Damaged files"). So every write transaction of this package also holds
///
/// - an exclusive open-file-description lock (`fcntl(F_OFD_SETLKW)`) on
///   byte 0 of `data.mdb`, through LMDB's own descriptor of it: the data
///   file is never deleted under a writer, so every writer of every process
///   meets there. An OFD lock, unlike a POSIX one, is not dropped when
///   another descriptor of the file closes; it is the descriptor's, so a
///   mutex orders this process's own threads first;
/// - the check that `lock.mdb` is still the file this environment opened
///   (same device and inode): a writer whose lock file was replaced keeps
///   a reader table that new readers do not enter, so it could reuse pages
///   they read. It refuses (``LockFileReplacedError``), and so do its read
///   transactions, whose slots new writers would not see (checked at most
///   every 100 ms for reads, so that a read pays a clock read, not a
///   `stat`; once found, every read is refused).
///
/// Taken before LMDB's mutex and released after the commit, in that order
/// in every process, so they cannot deadlock.
final class WriterExclusion: @unchecked Sendable {
    private let mutex = NSLock()
    private let descriptor: Int32
    /// When reads check the lock file next (monotonic nanoseconds), and what
    /// they found, behind `readCheck`.
    private let readCheck = NSLock()
    private var nextReadCheck: UInt64 = 0
    private var replaced: LockFileReplacedError?
    static let readCheckInterval: UInt64 = 100_000_000
    private let lockFile: String
    private let identity: (device: UInt64, inode: UInt64)?

    /// `descriptor`: LMDB's descriptor of the data file (`mdb_env_get_fd`),
    /// open for writing; nil identity for an environment without a lock file.
    init(descriptor: Int32, directory: String, hasLockFile: Bool) {
        self.descriptor = descriptor
        lockFile = (directory as NSString).appendingPathComponent(LockFile.name)
        identity = hasLockFile ? Self.identity(of: lockFile) : nil
    }

    private static func identity(of path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Throws ``LockFileReplacedError`` when `lock.mdb` is no longer the
    /// file this environment opened.
    func checkLockFile() throws {
        guard let identity else { return }
        let now = Self.identity(of: lockFile)
        guard let now, now == identity else { throw LockFileReplacedError(lockFile: lockFile, removed: now == nil) }
    }

    /// ``checkLockFile()`` for a read: at most every 100 ms; a replacement,
    /// once found, is thrown again at once.
    func checkLockFileForReading() throws {
        guard identity != nil else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        readCheck.lock()
        let found = replaced
        let due = found == nil && now >= nextReadCheck
        if due { nextReadCheck = now + Self.readCheckInterval }
        readCheck.unlock()
        if let found { throw found }
        guard due else { return }
        do {
            try checkLockFile()
        } catch let error as LockFileReplacedError {
            readCheck.lock()
            replaced = error
            readCheck.unlock()
            throw error
        }
    }

    /// Waits for this process's other writers, then for every other
    /// process's (the lock on `data.mdb`), then checks the lock file.
    func acquire() throws {
        mutex.lock()
        do {
            try lockData(Int16(F_WRLCK), wait: true)
            do {
                try checkLockFile()
            } catch {
                try? lockData(Int16(F_UNLCK), wait: false)
                throw error
            }
        } catch {
            mutex.unlock()
            throw error
        }
    }

    func release() {
        try? lockData(Int16(F_UNLCK), wait: false)
        mutex.unlock()
    }

    private func lockData(_ type: Int16, wait: Bool) throws {
        var lock = flock()
        lock.l_type = type
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        lock.l_pid = 0   // an OFD lock: the kernel requires 0
        while fcntl(descriptor, wait ? Self.setLockWaiting : Self.setLock, &lock) != 0 {
            let error = errno
            if error == EINTR { continue }
            throw LMDBError(code: error, call: "fcntl(data.mdb, F_OFD_SETLK\(wait ? "W" : ""))")
        }
    }

    // Linux's F_OFD_SETLK and F_OFD_SETLKW (fcntl.h with _GNU_SOURCE), which Glibc's module does not export.
    private static let setLock: Int32 = 37
    private static let setLockWaiting: Int32 = 38
}

/// `lock.mdb` was removed or replaced while this process had the
/// environment open (``WriterExclusion``): its writes and reads are refused,
/// since other processes' writers no longer see them.
public struct LockFileReplacedError: Error, CustomStringConvertible, Sendable {
    /// The lock file's path.
    public var lockFile: String
    /// True when the file is gone; false when another file took its place.
    public var removed: Bool

    public var description: String {
        "\(lockFile) was \(removed ? "removed" : "replaced by another file") while this process had the store open: "
            + "LMDB keeps its writer lock and reader table there, so this process's writes and reads would no longer be seen by "
            + "other processes. Refusing; close the store and open it again (never delete lock.mdb while the store is open)"
    }
}
