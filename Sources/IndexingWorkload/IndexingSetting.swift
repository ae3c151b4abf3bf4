import EventLog
import LMDB

/// One setting of the indexing benchmark: how items are committed.
public struct IndexingSetting: Sendable, Codable, Equatable {
    public var batchSize: Int
    public var durability: Durability
    /// Threads indexing at once, each taking the next batch; their commits
    /// share transactions and fsyncs (group commit).
    public var writers: Int

    public init(batchSize: Int, durability: Durability = .durable, writers: Int = 1) {
        self.batchSize = batchSize
        self.durability = durability
        self.writers = writers
    }
}
