import CLMDB

/// What a commit waits for before it returns, and so what a crash can cost.
///
/// | setting | LMDB flag | fsyncs a commit | what a crash can lose |
/// |---|---|---|---|
/// | ``durable`` | none | 2 (data, then meta page) | nothing that was committed |
/// | ``noMetaSync`` | `MDB_NOMETASYNC` | 1 (data) | the last commit(s) before an OS crash; never consistency |
/// | ``noSync`` | `MDB_NOSYNC` | 0 | every commit the OS had not yet written; an OS crash on a filesystem that reorders writes may corrupt the store |
///
/// A process crash (SIGKILL) costs nothing committed under any setting: the OS
/// still holds the pages. The settings differ only when the machine itself
/// goes down.
public enum Durability: String, Sendable, CaseIterable, Codable {
    case durable
    case noMetaSync
    case noSync

    var environmentFlags: UInt32 {
        switch self {
        case .durable: 0
        case .noMetaSync: UInt32(MDB_NOMETASYNC)
        case .noSync: UInt32(MDB_NOSYNC)
        }
    }
}
