import EventLog
import LMDB

/// One setting of the indexing benchmark: how items are committed.
public struct IndexingSetting: Sendable, Codable, Equatable {
    public var batchSize: Int
    public var durability: Durability
    /// Threads indexing at once, each taking the next batch; their commits
    /// share transactions and fsyncs (group commit).
    public var writers: Int
    /// Batches each writer hands over before the first of them is durable
    /// (``ActivityDomain/CommandPipeline``'s depth), so that the next
    /// batch is tokenized while one commits; 0: each batch waits for its
    /// own commit before the next is handed over.
    public var pipeline: Int
    /// Users the items are spread over (``UserSpread``): item i belongs to
    /// user `u{i mod N}` and is indexed by an operation of its own, as
    /// `peer_bench.py --users N` does; nil: every batch is one operation
    /// in the default space.
    public var users: Int?

    public init(batchSize: Int, durability: Durability = .durable, writers: Int = 1, pipeline: Int = 0, users: Int? = nil) {
        self.batchSize = batchSize
        self.durability = durability
        self.writers = writers
        self.pipeline = pipeline
        self.users = users
    }
}
