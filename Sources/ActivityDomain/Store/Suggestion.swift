import Foundation

/// A saved activity suggested for prediction (Siri's "suggest returning to
/// this screen"), with its score at the query's `now`.
///
/// The score is frecency, as browsers rank history: a copy that became
/// current `n` times (while its key held a copy), the last ten at times
/// `t₁ … t_k`, scores
///
/// ```
/// score = n × (1/k) × Σᵢ 2^(−ageᵢ / 7 days),   ageᵢ = max(0, now − tᵢ)
/// ```
///
/// so each use counts, recent uses count more, and a week halves a use's
/// weight. Everything it needs is in the saved-activity view, which the log
/// alone determines; the clock enters only as the query's `now`. A copy that
/// never became current under its key (saved by an update) scores 0.
///
/// ```swift
/// let top = try store.user("alice").suggestions(now: Date(), limit: 5)
/// top.first?.key      // "order-42"
/// ```
public struct Suggestion: Sendable, Hashable {
    /// The saved copy's key.
    public var key: String
    /// The saved copy.
    public var activity: UserActivity
    public var score: Double

    /// Half-life of a use's weight.
    public static let halfLife: TimeInterval = 7 * 24 * 3600

    public init(key: String, activity: UserActivity, score: Double) {
        self.key = key
        self.activity = activity
        self.score = score
    }

    init(record: Activitylog_V1_SavedRecord, nowMicros: Int64) throws {
        key = record.key
        activity = try UserActivity(proto: record.copy)
        score = Self.score(count: record.becameCurrentCount, recentMicros: record.recentBecameCurrentMicros, nowMicros: nowMicros)
    }

    static func score(count: UInt64, recentMicros: [Int64], nowMicros: Int64) -> Double {
        guard count > 0, !recentMicros.isEmpty else { return 0 }
        let halfLifeMicros = halfLife * 1_000_000
        var sum = 0.0
        for t in recentMicros {
            let age = Double(max(0, nowMicros - t))
            sum += exp2(-age / halfLifeMicros)
        }
        return Double(count) * sum / Double(recentMicros.count)
    }
}
