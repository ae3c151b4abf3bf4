/// The smallest batch size whose throughput is within 10% of the best, and
/// what it costs in commit latency: the trade a user tunes.
///
/// ```swift
/// let advice = BatchSizeRecommendation(results)
/// print("batch \(advice.batchSize): \(advice.itemsPerSecond) items/s, p99 commit \(advice.commitP99) ms")
/// ```
public struct BatchSizeRecommendation: Sendable, Codable, Equatable {
    public var batchSize: Int
    public var durability: String
    public var writers: Int
    public var itemsPerSecond: Double
    public var bestItemsPerSecond: Double
    /// Commit latency of the recommended batch size, milliseconds.
    public var commitP50: Double
    public var commitP99: Double

    /// Among `results` of one durability and writer count (the first
    /// result's), or nil when empty: batch sizes only compare at equal
    /// durability and writers.
    public init?(_ results: [IndexingResult]) {
        guard let first = results.first else { return nil }
        let same = results.filter { $0.setting.durability == first.setting.durability && $0.setting.writers == first.setting.writers }
        let best = same.map(\.itemsPerSecond).max() ?? 0
        guard let pick = same.filter({ $0.itemsPerSecond >= 0.9 * best }).min(by: { $0.setting.batchSize < $1.setting.batchSize })
        else { return nil }
        batchSize = pick.setting.batchSize
        durability = pick.setting.durability.rawValue
        writers = pick.setting.writers
        itemsPerSecond = pick.itemsPerSecond
        bestItemsPerSecond = best
        commitP50 = pick.commitLatency.p50
        commitP99 = pick.commitLatency.p99
    }

    /// One recommendation per durability and writer count, in the order they first appear.
    public static func each(_ results: [IndexingResult]) -> [BatchSizeRecommendation] {
        var seen: [(String, Int)] = []
        var all: [BatchSizeRecommendation] = []
        for result in results {
            let key = (result.setting.durability.rawValue, result.setting.writers)
            guard !seen.contains(where: { $0 == key }) else { continue }
            seen.append(key)
            let group = results.filter { $0.setting.durability == result.setting.durability && $0.setting.writers == result.setting.writers }
            if let advice = BatchSizeRecommendation(group) { all.append(advice) }
        }
        return all
    }
}
