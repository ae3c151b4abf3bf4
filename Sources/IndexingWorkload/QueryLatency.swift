/// Latency of free-text queries over the indexed store, microseconds.
public struct QueryLatency: Sendable, Codable, Equatable {
    public var count: Int
    public var withHits: Int
    public var p50Microseconds: Double
    public var p99Microseconds: Double
    public var maxMicroseconds: Double
}
