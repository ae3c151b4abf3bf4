/// What ``EventStore/compact(path:options:progress:)`` did.
public struct StoreCompaction: Sendable, Equatable {
    /// The store's directory, resolved.
    public var path: String
    /// The log's last position (unchanged by compaction).
    public var head: Position
    /// `data.mdb`'s size before and after, in bytes.
    public var bytesBefore: Int
    public var bytesAfter: Int
    /// Stale bytes in the copy (overflow pages' tails, pages' free middles,
    /// which LMDB's compacting copy does not clear), zeroed before the swap.
    public var bytesZeroed: Int
    /// What killed processes had left and the compaction removed, relative
    /// to ``path``: a compaction's temporary copy, rebuild scratch
    /// environments, partial snapshots.
    public var removed: [String]
    /// Both compactions' seconds.
    public var seconds: Double
    /// The index environment's compaction (`index/data.mdb`); nil when the
    /// store has none.
    public var index: IndexCompaction?
    /// The records rewritten in the compact form before the copy
    /// (``EventStore/rewriteRecordsCompact(path:options:)``).
    public var records = RecordRewrite()

    public init(path: String, head: Position, bytesBefore: Int, bytesAfter: Int, bytesZeroed: Int, removed: [String], seconds: Double) {
        self.path = path
        self.head = head
        self.bytesBefore = bytesBefore
        self.bytesAfter = bytesAfter
        self.bytesZeroed = bytesZeroed
        self.removed = removed
        self.seconds = seconds
    }
}

/// What a compaction did to the index environment's file (`index/data.mdb`).
public struct IndexCompaction: Sendable, Equatable {
    public var bytesBefore: Int
    public var bytesAfter: Int
    /// Stale bytes of the copy zeroed before the swap, as for the log's file.
    public var bytesZeroed: Int
    /// What a killed compaction of the index had left, relative to the store.
    public var removed: [String]
    public var seconds: Double
}
