/// Where a compaction is, for a progress display.
public struct CompactionProgress: Sendable, Equatable {
    public var step: CompactionStep
    /// Bytes of the copy written so far.
    public var bytesWritten: Int
    /// At most this many bytes will be written: the old file's pages up to
    /// its last one in use (free pages among them are left out).
    public var bytesExpected: Int

    public init(step: CompactionStep, bytesWritten: Int, bytesExpected: Int) {
        self.step = step
        self.bytesWritten = bytesWritten
        self.bytesExpected = bytesExpected
    }
}
