import Foundation
import LMDB

/// Raw LMDB's commit, made beside the engine's: one 300-byte record
/// appended (`mdb_put` with `MDB_APPEND`) and committed in an environment
/// of its own, with the same durability. `eventlog bench --alternate-raw`
/// makes one after each of the engine's commits, so that the disk's
/// changing load (the machines are shared) falls on both alike, and
/// reports the engine's rate as a ratio to this one.
///
/// ```swift
/// let raw = try RawCommits(path: store + "-raw", durability: .durable)
/// try raw.commitOne()                    // one raw commit, its time added up
/// ```
///
/// `@unchecked Sendable`: used by the run's one writer thread (the bench
/// allows it with one writer only), and read after that thread finished.
final class RawCommits: @unchecked Sendable {
    private let environment: Environment
    private let log: Database<UInt64, [UInt8]>
    private let value = [UInt8](repeating: 7, count: 300)
    private var position: UInt64 = 0
    private let clock = ContinuousClock()
    /// Time spent in raw commits so far, and how many.
    private(set) var seconds = 0.0
    private(set) var commits = 0

    init(path: String, durability: Durability) throws {
        var options = EnvironmentOptions()
        options.durability = durability
        options.mapSize = 1 << 30
        environment = try Environment(path: path, options: options)
        log = try environment.write { try $0.createDatabase("log") }
    }

    /// Appends and commits one record, adding its time to ``seconds``.
    func commitOne() throws {
        position += 1
        let before = clock.now
        try environment.write { txn in try log.put(value, forKey: position, flags: .append, in: txn) }
        seconds += (clock.now - before).seconds
        commits += 1
    }

    var commitsPerSecond: Double { seconds > 0 ? Double(commits) / seconds : 0 }
}

/// Raw LMDB's commit rate measured beside the engine's (`--alternate-raw`).
public struct RawCommitRate: Sendable, Codable, Equatable {
    /// Raw LMDB's single-record commits per second, each made right after
    /// one of the engine's.
    public var commitsPerSecond: Double
    /// The engine's commits per second over the same commits, each timed
    /// from hand-over to durable, divided by ``commitsPerSecond``.
    public var engineRatio: Double
}
