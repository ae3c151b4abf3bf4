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
    /// After each commit, one commit of raw LMDB beside the store
    /// (`--alternate-raw`); with one writer and no pipeline only.
    public var alternatesRaw: Bool

    public init(batchSize: Int, durability: Durability = .durable, writers: Int = 1, pipeline: Int = 0, users: Int? = nil,
                alternatesRaw: Bool = false) {
        self.batchSize = batchSize
        self.durability = durability
        self.writers = writers
        self.pipeline = pipeline
        self.users = users
        self.alternatesRaw = alternatesRaw
    }

    enum CodingKeys: String, CodingKey { case batchSize, durability, writers, pipeline, users, alternatesRaw }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(batchSize: try c.decode(Int.self, forKey: .batchSize), durability: try c.decode(Durability.self, forKey: .durability),
                  writers: try c.decode(Int.self, forKey: .writers), pipeline: try c.decode(Int.self, forKey: .pipeline),
                  users: try c.decodeIfPresent(Int.self, forKey: .users),
                  alternatesRaw: try c.decodeIfPresent(Bool.self, forKey: .alternatesRaw) ?? false)
    }
}
