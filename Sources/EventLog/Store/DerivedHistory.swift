import LMDB

/// Where a file derived from the log (the index environment, a snapshot)
/// stands against the log it says it was built from (SPEC §2, "The log
/// vouches for everything derived from it").
///
/// Each derived file records the position and the chain link of the last
/// record it was built through. The log vouches for it when its own record
/// at that position has that link; a link that differs is another history
/// (another store's file, or a log that was replaced); a position past the
/// head means the log has lost records (restored from an older copy, taken
/// back), or that the file is another store's. Such a file is never read,
/// and a log behind anything derived from it is never written.
///
/// ```swift
/// if let history = try store.indexHistory(), !history.isThisLog { print(history) }
/// // "position 27, link 3f2a…: ahead of the log (its head is 0)"
/// ```
public struct DerivedHistory: Sendable, Equatable, CustomStringConvertible {
    public enum Standing: Sendable, Equatable {
        /// The log's record at the position has the same link.
        case thisLog
        /// The position lies past the log's head (`head`).
        case aheadOfLog(head: Position)
        /// The log's record at the position has another link (`logLink`).
        case anotherHistory(logLink: ChainLink)
        /// The file records no link (a snapshot written before snapshots
        /// recorded one): it cannot be checked against the log, and is
        /// never used.
        case unrecorded
    }

    /// The last position the file was built through.
    public var position: Position
    /// That record's link, as the file recorded it; nil when it recorded none.
    public var link: ChainLink?
    public var standing: Standing

    public init(position: Position, link: ChainLink?, standing: Standing) {
        self.position = position
        self.link = link
        self.standing = standing
    }

    /// The log vouches for the file.
    public var isThisLog: Bool { standing == .thisLog }

    /// The file is past the log's head: the log has lost records, or the file is another store's.
    public var isAheadOfLog: Bool {
        if case .aheadOfLog = standing { return true }
        return false
    }

    /// `thisLog`, `aheadOfLog`, `anotherHistory` or `unrecorded`: what `--json` prints.
    public var name: String {
        switch standing {
        case .thisLog: "thisLog"
        case .aheadOfLog: "aheadOfLog"
        case .anotherHistory: "anotherHistory"
        case .unrecorded: "unrecorded"
        }
    }

    public var description: String {
        let stamp = "position \(position), link \(link.map { "\($0)" } ?? "none recorded")"
        switch standing {
        case .thisLog: return "\(stamp): this log's"
        case .aheadOfLog(let head): return "\(stamp): ahead of the log (its head is \(head))"
        case .anotherHistory(let logLink): return "\(stamp): another history (the log's record \(position) has link \(logLink))"
        case .unrecorded: return "\(stamp): cannot be checked against the log"
        }
    }

    /// The history of a file stamped with `position` and `link`, against
    /// the log as `txn` sees it.
    static func of(position: Position, link: ChainLink?, log databases: LogDatabases, in txn: ReadTransaction) throws -> DerivedHistory {
        guard let link else { return DerivedHistory(position: position, link: nil, standing: .unrecorded) }
        guard let logLink = try databases.link(at: position, in: txn) else {
            return DerivedHistory(position: position, link: link, standing: .aheadOfLog(head: try databases.head(in: txn).position))
        }
        return DerivedHistory(position: position, link: link, standing: logLink == link ? .thisLog : .anotherHistory(logLink: logLink))
    }

    /// Why `file` (`"the store's index at /srv/events/index"`) is not
    /// used, naming both positions (or both links), with how to rebuild it
    /// (`remedy`) or, for a log behind it, how to recover the log. Nil when
    /// the log vouches for it.
    func refusal(of file: String, store: String, remedy: String, operation: String = "open") -> EventLogError? {
        switch standing {
        case .thisLog:
            return nil
        case .aheadOfLog(let head):
            return EventLogError(.corrupt, operation: operation,
                                 "\(file) was built from the log through position \(position), but the log's head is \(head): "
                                     + "the log has lost records (its data.mdb restored from an older copy, or taken back), or the file is another store's. "
                                     + "It is not read, and nothing is written over positions it has seen: the store's writers refuse it. "
                                     + "Restore the log (a follower, `eventlog restore`); or, if the log is right, \(remedy)",
                                 position: head)
        case .anotherHistory(let logLink):
            return EventLogError(.diverged, operation: operation,
                                 "\(file) was built from another history: its record \(position) has link \(link.map { "\($0)" } ?? "-"), "
                                     + "the log's record \(position) has link \(logLink). It is not read; \(remedy)",
                                 position: position)
        case .unrecorded:
            return EventLogError(.snapshot, operation: operation,
                                 "\(file) records no link of the log (an older format), so it cannot be checked against the log (at \(position)) and is not used; \(remedy)",
                                 position: position)
        }
    }
}
