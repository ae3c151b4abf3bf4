import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Who owns what a process creates in a store. A store belongs to its
/// directory's owner (a service's user); maintenance run as root (`eventlog
/// replay`, `snapshot create`, `compact`) must not leave root-owned files
/// or directories there (`index/`, `snapshots/`, a lock file), which that
/// user could then no longer open, write or remove. So everything this
/// package creates in a store takes the owner and group of the directory it
/// is created in (`lchown(2)`): when this process runs as root and they
/// differ. A process of another user (not root) cannot give its files away,
/// and a store's writers refuse to run as such a user
/// (``refuseForeignWriter(_:)``).
///
/// ```swift
/// mkdir(path, 0o700)
/// StoreOwner.adopt(path)   // owned as its parent directory is
/// ```
public enum StoreOwner {
    /// Gives `path` the owner and group of its parent directory, when this
    /// process runs as root and they differ; failures are ignored (the
    /// file stays this process's).
    public static func adopt(_ path: String) {
        guard geteuid() == 0 else { return }
        let parent = StorePath.parent(of: path)
        var owner = stat(), info = stat()
        guard stat(parent, &owner) == 0, lstat(path, &info) == 0 else { return }
        guard info.st_uid != owner.st_uid || info.st_gid != owner.st_gid else { return }
        _ = lchown(path, owner.st_uid, owner.st_gid)
    }

    /// Throws unless this process may create files in `directory` that its
    /// owner can use: it runs as that owner, or as root (which gives them
    /// away: ``adopt(_:)``). A directory that does not exist yet is this
    /// process's to create.
    public static func refuseForeignWriter(_ directory: String) throws {
        let uid = geteuid()
        guard uid != 0 else { return }
        var info = stat()
        guard stat(directory, &info) == 0, info.st_uid != uid else { return }
        throw ForeignOwnerError(path: directory, owner: info.st_uid, user: uid)
    }
}

/// A process of one user would create files in a store that belongs to
/// another (its directory's owner), which that owner could then not use.
public struct ForeignOwnerError: Error, CustomStringConvertible, Sendable, Equatable {
    public var path: String
    public var owner: uid_t
    public var user: uid_t

    public var description: String {
        "permission denied: \(path) belongs to uid \(owner), and this process runs as uid \(user): what it would create there (index/, snapshots/, "
            + "lock files) would belong to uid \(user), which the store's owner could not use. Run as uid \(owner) (or as root, "
            + "whose new files take the directory's owner)"
    }
}
