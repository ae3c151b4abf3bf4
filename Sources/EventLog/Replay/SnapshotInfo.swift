import Foundation

/// A snapshot on disk: the projections' state at ``position``.
public struct SnapshotInfo: Sendable, Equatable {
    /// The log position the views were at.
    public var position: Position
    /// The file, `<store>/snapshots/<position>.snapshot`.
    public var path: String
    /// Projection names and the versions that wrote them.
    public var projections: [ProjectionStamp]
    /// The file's size.
    public var bytes: Int
    /// The link of the log's record at ``position``: the history the
    /// snapshot was built from (``EventStore/history(of:)``). Nil in a
    /// snapshot of the first format, which recorded none: never used.
    public var link: ChainLink?
    /// The views' snapshot, or the index's.
    public var kind: SnapshotKind = .views

    /// A projection's name and version, as stamped in a snapshot.
    public struct ProjectionStamp: Sendable, Equatable, Hashable {
        public var name: String
        public var version: UInt32
    }
}

/// When the store takes snapshots by itself.
///
/// ```swift
/// var options = StoreOptions()
/// options.snapshotPolicy = SnapshotPolicy(every: 100_000, keep: 3)
/// ```
public struct SnapshotPolicy: Sendable, Equatable {
    /// A snapshot after each commit that crosses a multiple of this many events.
    public var every: UInt64
    /// How many of the newest snapshots to keep; older ones are deleted.
    public var keep: Int

    public init(every: UInt64, keep: Int = 3) {
        self.every = max(1, every)
        self.keep = max(1, keep)
    }
}
