/// What ``EventStore/compact(path:options:progress:)`` did.
public struct StoreCompaction: Sendable, Equatable {
    /// The store's directory, resolved.
    public var path: String
    /// The log's last position (unchanged by compaction).
    public var head: Position
    /// `data.mdb`'s size before and after, in bytes.
    public var bytesBefore: Int
    public var bytesAfter: Int
    /// Stale bytes past the end of values on overflow pages, zeroed in the
    /// new file (LMDB copies those pages whole).
    public var bytesZeroed: Int
    /// What killed processes had left and the compaction removed, relative
    /// to ``path``: a compaction's temporary copy, rebuild scratch
    /// environments, partial snapshots.
    public var removed: [String]
    public var seconds: Double

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
