/// Percentiles of latency samples, in the samples' unit (milliseconds for commits).
public struct LatencySummary: Sendable, Codable, Equatable {
    public var p50: Double
    public var p99: Double
    public var max: Double

    /// Nearest-rank percentiles; all zero without samples.
    public init(_ samples: [Double]) {
        let sorted = samples.sorted()
        p50 = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        max = sorted.last ?? 0
    }
}
