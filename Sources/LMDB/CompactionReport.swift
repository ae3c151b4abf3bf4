/// What a compaction did.
public struct CompactionReport: Sendable, Equatable {
    /// The environment's directory, resolved.
    public var path: String
    /// `data.mdb`'s size before and after, in bytes.
    public var bytesBefore: Int
    public var bytesAfter: Int
    /// Bytes past the end of values on overflow pages that held something
    /// and were zeroed in the copy (``Environment/zeroOverflowTails(writingTo:file:)``).
    public var bytesZeroed: Int
    /// Whether a temporary copy left by an earlier, killed compaction was removed.
    public var removedLeftover: Bool
    public var seconds: Double

    public init(path: String, bytesBefore: Int, bytesAfter: Int, bytesZeroed: Int, removedLeftover: Bool, seconds: Double) {
        self.path = path
        self.bytesBefore = bytesBefore
        self.bytesAfter = bytesAfter
        self.bytesZeroed = bytesZeroed
        self.removedLeftover = removedLeftover
        self.seconds = seconds
    }
}
