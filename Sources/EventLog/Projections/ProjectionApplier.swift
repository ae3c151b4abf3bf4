import LMDB

/// Applies events to projections in one write transaction, the one way the
/// engine does it: makes each projection's writer, hands it the events from
/// the projection's own start on, lets every writer finish (write what it
/// held back), and moves the checkpoints. A commit (``LogBatch``), a
/// catch-up, a rebuild's swap, the view builder and the indexer all apply
/// through it.
///
/// ```swift
/// let applier = try ProjectionApplier(views.all, in: txn, log: log)
/// for event in events { try applier.apply(event) }
/// try applier.finish(movingCheckpointsTo: last, in: checkpoints)
/// ```
final class ProjectionApplier {
    let projections: [any Projection]
    private let writers: [any ProjectionWriter]
    /// The first position each projection applies (0: every event).
    private let starts: [Position]
    private let transaction: WriteTransaction

    /// Writers for `projections` in `txn`, reading the log through `log`;
    /// `starts[i]`, when given, is the first position projection `i` applies
    /// (a lagging projection catching up beside others).
    init(_ projections: [any Projection], starts: [Position]? = nil, in txn: WriteTransaction, log: LogReader) throws {
        self.projections = projections
        self.starts = starts ?? Array(repeating: 0, count: projections.count)
        transaction = txn
        writers = try projections.map { try $0.makeWriter(in: txn, log: log) }
    }

    /// Applies `event` to every projection that starts at or before it.
    func apply(_ event: RecordedEvent) throws {
        for (i, writer) in writers.enumerated() where event.position >= starts[i] {
            try writer.apply(event)
        }
    }

    /// Applies `event` with what each projection prepared of it
    /// (``Projection/prepare(_:log:)``, in the order of ``projections``).
    func apply(_ event: RecordedEvent, prepared: [(any Sendable)?]) throws {
        for (i, writer) in writers.enumerated() where event.position >= starts[i] {
            try writer.apply(event, prepared: prepared[i])
        }
    }

    /// What each of `projections` prepares of `event`
    /// (``Projection/prepare(_:log:)``), in their order: the second argument
    /// of ``apply(_:prepared:)``.
    static func prepare(_ event: RecordedEvent, for projections: [any Projection], log: LogReader) throws -> [(any Sendable)?] {
        try projections.map { try $0.prepare(event, log: log) }
    }

    /// Lets every writer write what it held back; once, before the commit.
    func finish() throws {
        for writer in writers { try writer.finish() }
    }

    /// ``finish()``, then every projection's checkpoint at `position`.
    func finish(movingCheckpointsTo position: Position, in checkpoints: CheckpointTable) throws {
        try finish()
        try checkpoints.set(projections, to: position, in: transaction)
    }
}
