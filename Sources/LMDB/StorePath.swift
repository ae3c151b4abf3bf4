import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A store's directory as the kernel names it: bytes, end to end.
///
/// Foundation makes a relative path absolute with the working directory's
/// path decoded as a `String`, replacing bytes that are not UTF-8 with
/// U+FFFD: under two working directories named by different invalid bytes,
/// `--store events` would name one directory, `…/\u{FFFD}/events`, that is
/// neither. So a directory is created with `mkdir(2)` and resolved with
/// `realpath(3)`, whose bytes are kept when they are UTF-8 (an absolute
/// path); when they are not (a working directory whose path is not UTF-8),
/// the path stays as given, relative, and the kernel resolves it against
/// the working directory at every call, as it must.
///
/// ```swift
/// try StorePath.createDirectory("events", mode: 0o700)   // mkdir -p, each new directory owned as its parent
/// let path = StorePath.resolved("events")                  // "/srv/app/events", or "events" under a non-UTF-8 directory
/// ```
public enum StorePath {
    /// `path` with symbolic links, `.` and `..` resolved (`realpath(3)`),
    /// when it exists and its absolute form is UTF-8; else `path` as given.
    public static func resolved(_ path: String) -> String {
        guard let pointer = realpath(path, nil) else { return path }
        defer { free(pointer) }
        return String(validatingCString: pointer) ?? path
    }

    /// The directory that holds `path`, lexically: `a/b` → `a`, `b` → `.`,
    /// `/b` → `/` (trailing slashes ignored). (Foundation's
    /// `deletingLastPathComponent` traps on a one-component relative path.)
    public static func parent(of path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        var end = slash
        while end > 0 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// The last component of `path`: `a/b` → `b` (trailing slashes ignored).
    public static func lastComponent(_ path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: bytes[(slash + 1)...], as: UTF8.self)
    }

    /// Creates `path` and the directories above it that are missing
    /// (`mkdir(2)`, `mode`), each owned as the directory it is created in
    /// (``StoreOwner/adopt(_:)``). Throws ``LMDBError`` naming the call
    /// (`EACCES` for a directory this user may not write); an existing
    /// directory is fine, anything else there is `ENOTDIR`.
    public static func createDirectory(_ path: String, mode: mode_t = 0o700) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw LMDBError(code: ENOTDIR, call: "mkdir(\(path))") }
            return
        }
        let parent = Self.parent(of: path)
        if parent != path && parent != "." && parent != "/" { try createDirectory(parent, mode: mode) }
        guard mkdir(path, mode) == 0 else {
            let code = errno
            if code == EEXIST, stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return }
            throw LMDBError(code: code, call: "mkdir(\(path))")
        }
        StoreOwner.adopt(path)
    }
}
