import LMDB

/// How a store's views stand against its log, as one read transaction sees
/// them: for each projection, the position it applied through and the
/// version that built it.
///
/// A store opened for writing keeps every view at the head. One opened
/// read-only (``StoreOptions/readOnly``) rebuilds nothing, so its views may
/// lag: another build appended events to a projection it does not have, or
/// changed a projection's version and was not followed by a replay.
///
/// ```swift
/// let status = try store.viewStatus()
/// if !status.isCurrent { print(status) }   // "projection search is 12 events behind the log (…)"
/// ```
public struct ViewStatus: Sendable, Equatable, CustomStringConvertible {
    /// One projection's standing.
    public struct ProjectionState: Sendable, Equatable {
        public var name: String
        /// The version this code builds.
        public var version: UInt32
        /// The version that built the stored view; nil when it has no checkpoint.
        public var storedVersion: UInt32?
        /// The last position applied; 0 when none.
        public var checkpoint: Position
        /// The log's head in the same transaction.
        public var head: Position

        /// Events in the log that the view has not applied.
        public var eventsBehind: UInt64 { head > checkpoint ? head - checkpoint : 0 }
        /// Built by another version of the projection: its bytes may not
        /// mean what this code reads, so it is never served.
        public var isOtherVersion: Bool { storedVersion.map { $0 != version } ?? false }
        public var isCurrent: Bool { !isOtherVersion && eventsBehind == 0 }

        public var description: String {
            if isOtherVersion {
                return "projection \(name) was built by version \(storedVersion!), this code's is \(version)"
            }
            return "projection \(name) is \(eventsBehind) events behind the log (applied through \(checkpoint), head \(head))"
        }
    }

    /// The log's last position.
    public var head: Position
    public var projections: [ProjectionState]
    /// How the index stands (``EventStore/indexStatus()``): it follows the
    /// log, so lagging is normal and not part of ``isCurrent``; nil from
    /// ``EventStore/viewStatus(in:)`` (a transaction of the log alone) and
    /// for a store without an index.
    public var index: IndexStatus? = nil

    /// Every view applied the whole log with this code's versions.
    public var isCurrent: Bool { projections.allSatisfy(\.isCurrent) }
    /// Some view was built by another projection version.
    public var hasOtherVersions: Bool { projections.contains(where: \.isOtherVersion) }
    /// The views that are not current.
    public var stale: [ProjectionState] { projections.filter { !$0.isCurrent } }

    /// What is behind and by how much, or that the views are current.
    public var description: String {
        let stale = self.stale
        if stale.isEmpty { return "the views are current at position \(head)" }
        return stale.map(\.description).joined(separator: "; ")
    }
}

extension EventStore {
    /// The views' standing against the log, and the index's; see ``ViewStatus``.
    public func viewStatus() throws -> ViewStatus {
        var status = try environment.read { try viewStatus(in: $0) }
        status.index = try indexStatus()
        return status
    }

    /// The views' standing as `txn` sees the store.
    public func viewStatus(in txn: ReadTransaction) throws -> ViewStatus {
        let head = try databases.head(in: txn).position
        return ViewStatus(head: head, projections: try views.all.map { projection in
            let checkpoint = try databases.checkpoint(of: projection.name, in: txn)
            return ViewStatus.ProjectionState(name: projection.name, version: projection.version,
                                              storedVersion: checkpoint?.version, checkpoint: checkpoint?.position ?? 0, head: head)
        })
    }

    /// Throws ``EventLogError/Code/viewsStale`` when the views are not to be
    /// served as they stand (``read(_:)``).
    func checkViews(in txn: ReadTransaction) throws {
        let status = try viewStatus(in: txn)
        if status.isCurrent || (options.servesLaggingViews && !status.hasOtherVersions) { return }
        let remedy = status.hasOtherVersions
            ? "`replay` with this version rebuilds them (opened read-only, the store rebuilds nothing)"
            : "`replay` catches them up (opened read-only, the store rebuilds nothing); StoreOptions.servesLaggingViews reads them as they stand"
        throw EventLogError(.viewsStale, operation: "read", "\(status): \(remedy)", position: status.stale.map(\.checkpoint).min())
    }
}
