import Foundation
import LMDB

/// A store's index: the views of ``ProjectionSet/Index``, which the
/// indexer applies behind the log in an LMDB environment of their own, the
/// directory `index/` of the store's directory (`data.mdb`, `lock.mdb`).
///
/// Derived: a pure function of the log, which it follows. It has its own
/// write lock and its own fsyncs, so its work never holds the log's writer
/// lock, and its checkpoint (the position and link of the last record
/// applied) is written in the same transactions as its views. It is
/// rebuilt from the log whenever it is missing, was built by another
/// version of its projections, or does not follow this log (its link
/// differs from the log's at its position). `Docs/Architecture.md`, "The
/// index".
///
/// ```swift
/// let applied = try store.index!.applied()            // 1200: searchable through position 1200
/// let hits = try store.readIndex(after: receipt.positions!.upperBound) { index, log in … }
/// ```
public final class StoreIndex<Views: ProjectionList>: Sendable {
    /// The index environment.
    public let environment: Environment
    /// The index's projections, opened in ``environment``.
    public let views: Views
    let databases: IndexDatabases

    /// The index environment's directory in a store's directory.
    public static var directoryName: String { EnvironmentDirectory.indexName }

    init(environment: Environment, views: Views, databases: IndexDatabases) {
        self.environment = environment
        self.views = views
        self.databases = databases
    }

    /// What the indexer's applying half writes.
    var target: IndexTarget {
        IndexTarget(environment: environment, databases: databases, projections: views.all)
    }

    /// The position and link of the last record the index applied (0 and
    /// the zero link when none).
    func appliedHead() throws -> RecordedHead {
        try environment.read { try databases.applied(in: $0) }
    }

    /// The position and link the index applied through, against the log
    /// (`environment` and `databases`, the store's log).
    func history(against log: Environment, databases logDatabases: LogDatabases) throws -> DerivedHistory {
        let applied = try appliedHead()
        return try log.read { try DerivedHistory.of(position: applied.position, link: applied.link, log: logDatabases, in: $0) }
    }

    /// The last position the index applied: every event up to it is
    /// searchable. 0 when none.
    public func applied() throws -> Position {
        try appliedHead().position
    }
}

/// The index environment's own database: `meta`, with `format` (as the
/// log's), `applied` (the position and link of the last record applied,
/// 40 bytes as the log's `head`) and each index projection's
/// `checkpoint:NAME` (`Docs/LogFormat.md`, "The index environment").
struct IndexDatabases: Sendable {
    static let names = ["meta"]
    let meta: Database<String, [UInt8]>

    init(openingIn txn: WriteTransaction) throws {
        meta = try txn.createDatabase("meta")
    }

    /// `meta`, read and written as the index environment's (format, applied, checkpoints).
    var metadata: MetaDatabase { MetaDatabase(database: meta, environment: .index) }
    var checkpoints: CheckpointTable { metadata.checkpoints }

    /// The last record applied; position 0 and the zero link when none.
    func applied(in txn: ReadTransaction) throws -> RecordedHead {
        try metadata.head("applied", in: txn) ?? RecordedHead(position: 0, link: .zero)
    }

    func setApplied(_ head: RecordedHead, in txn: WriteTransaction) throws {
        try metadata.setHead(head, forKey: "applied", in: txn)
    }

    /// Empties every index projection and moves the index back to position 0.
    func clear(_ projections: [any Projection], in txn: WriteTransaction) throws {
        for projection in projections { try projection.removeAllData(in: txn) }
        try setApplied(RecordedHead(position: 0, link: .zero), in: txn)
        try checkpoints.set(projections, to: 0, in: txn)
    }

    /// Why the index in `txn` must be rebuilt from position 1 before this
    /// code applies to it, or nil when it may go on from ``applied(in:)``:
    /// a projection built by another version, checkpoints that disagree
    /// with the applied head, or a head that is not the log's (`log`: the
    /// link of the log's record at the applied position, nil past the log's
    /// head).
    func reasonToRebuild(_ projections: [any Projection], logLink: (Position) throws -> ChainLink?,
                         in txn: ReadTransaction) throws -> String? {
        let applied = try self.applied(in: txn)
        for projection in projections {
            let checkpoint = try checkpoints.checkpoint(of: projection.name, in: txn)
            if let checkpoint, checkpoint.version != projection.version {
                return "projection \(projection.name) was built by version \(checkpoint.version), this code's is \(projection.version)"
            }
            if (checkpoint?.position ?? 0) != applied.position {
                return "projection \(projection.name) is at \(checkpoint?.position ?? 0), the index at \(applied.position)"
            }
        }
        guard applied.position > 0 else { return nil }
        guard let link = try logLink(applied.position) else {
            return "the index has applied through \(applied.position), past the log's head"
        }
        if link != applied.link {
            return "the index's record \(applied.position) is not the log's (another history)"
        }
        return nil
    }
}
