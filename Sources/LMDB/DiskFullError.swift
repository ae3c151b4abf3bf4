import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A write that failed because the filesystem holding the environment is
/// full: `ENOSPC` (or `EDQUOT`), or `EIO` from a write that LMDB could
/// make only in part (`mdb_page_flush` reports a short write as `EIO`)
/// while the filesystem has almost no space left. Nothing of the write was
/// committed.
///
/// ```swift
/// do { try env.write { … } }
/// catch let error as DiskFullError { print(error) }   // the disk holding /srv/events is full …
/// ```
public struct DiskFullError: Error, CustomStringConvertible, Sendable {
    /// The environment's directory.
    public var path: String
    /// The call that failed and its error (`mdb_txn_commit: No space left on device (28)`).
    public var underlying: LMDBError
    /// What the filesystem had left for this user when the write failed, when known.
    public var availableBytes: Int?

    public var description: String {
        let quota = underlying.code == EDQUOT
        let left = availableBytes.map { ", \($0) bytes left" } ?? ""
        return "the \(quota ? "disk quota" : "disk") holding \(path) is \(quota ? "exceeded" : "full")\(left) (\(underlying)): "
            + "nothing of this write was committed; free space on that filesystem, then retry"
    }

    /// Below this many bytes available, an `EIO` from a write is taken for
    /// a full filesystem: a short write fills it to the last block.
    static let nearlyFull = 1 << 20

    /// `error` as a ``DiskFullError`` when it is one (see the type), else
    /// `error` itself. `path` is the environment's directory.
    public static func classify(_ error: any Error, at path: String) -> any Error {
        guard let lmdb = error as? LMDBError, [ENOSPC, EDQUOT, EIO].contains(lmdb.code) else { return error }
        var info = statvfs()
        let available = statvfs(path, &info) == 0 ? Int(info.f_bavail) * Int(info.f_frsize) : nil
        if lmdb.code == EIO && (available ?? Int.max) >= nearlyFull { return error }
        return DiskFullError(path: path, underlying: lmdb, availableBytes: available)
    }
}
