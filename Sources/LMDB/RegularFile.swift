import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Opening a file that must be a regular file: a store's data or lock file,
/// a snapshot. A FIFO there would block an open (or a read) forever, a
/// device or socket would be read as something it is not, a directory
/// fails late with an unclear error: each is refused before it is opened
/// (`stat(2)`), and again on the descriptor (`fstat(2)`), the open itself
/// made with `O_NONBLOCK` so that nothing put there meanwhile can block it.
///
/// ```swift
/// guard let fd = try RegularFile.open("/srv/events/snapshots/00000000000000000120.snapshot", O_RDONLY) else { return }  // missing
/// defer { close(fd) }
/// ```
public enum RegularFile {
    /// Throws ``NotARegularFileError`` when `path` exists and is not a
    /// regular file (symbolic links followed); false when it does not
    /// exist, true when it is a regular file.
    @discardableResult
    public static func check(_ path: String) throws -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return false }
            throw LMDBError(code: code, call: "stat(\(path))")
        }
        if info.st_mode & S_IFMT != S_IFREG { throw NotARegularFileError(path: path, mode: info.st_mode) }
        return true
    }

    /// `open(2)` of `path` with `flags` (plus `O_NONBLOCK` and `O_CLOEXEC`,
    /// the first cleared again once the file is known to be regular), after
    /// ``check(_:)`` and before `fstat(2)` says it is regular: the
    /// descriptor, or nil when the file does not exist (and `flags` does
    /// not create it). Other failures throw ``LMDBError`` naming the call.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws -> Int32? {
        try check(path)
        let fd = Glibc.open(path, flags | O_NONBLOCK | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT && flags & O_CREAT == 0 { return nil }
            if code == ENXIO || code == ENODEV { throw NotARegularFileError(path: path, mode: 0) }
            throw LMDBError(code: code, call: "open(\(path))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw LMDBError(code: code, call: "fstat(\(path))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw NotARegularFileError(path: path, mode: info.st_mode)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }
}

/// A path where a regular file must be holds something else: a FIFO, a
/// socket, a device, a directory. Refused before it is opened.
public struct NotARegularFileError: Error, CustomStringConvertible, Sendable, Equatable {
    public var path: String
    /// `st_mode` (0 when the open itself said it is no regular file).
    public var mode: mode_t

    public init(path: String, mode: mode_t) {
        self.path = path
        self.mode = mode
    }

    /// What the path holds, in words.
    public var kind: String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    public var description: String {
        "\(path) is \(kind), where a regular file must be: it was not opened (a FIFO would wait forever, a device or socket "
            + "would be read as something it is not); move it away"
    }
}
