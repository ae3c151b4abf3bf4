import Foundation
import LMDB
import Logging

/// What a commit waits for (see `LMDB.Durability`), named here so that users
/// of the engine set it without importing the LMDB layer.
public typealias Durability = LMDB.Durability

/// How an ``EventStore`` opens and writes.
///
/// ```swift
/// var options = StoreOptions()
/// options.durability = .noMetaSync
/// let store = try EventStore<Views>(path: "/var/lib/app/events", options: options)
/// ```
public struct StoreOptions: Sendable {
    /// What a commit waits for; see ``LMDB/Durability``.
    public var durability: Durability = .durable
    /// The map's first size; it grows by itself.
    public var initialMapSize: Int = 64 << 20
    /// Reader slots; raise it for many reading processes or threads.
    public var maxReaders: UInt32 = 1024
    /// Create the store when the directory holds none; when false, opening a
    /// missing store throws ``EventLogError/Code/storeMissing``.
    public var createIfMissing = true
    /// The clock that stamps events appended without a time of their own.
    /// Projections never read it.
    public var clock: @Sendable () -> Date = { Date() }
    /// How many concurrent writers' batches may share one transaction (and
    /// one fsync). 1 turns group commit off.
    public var maxGroupCommit = 64
    /// Events per transaction while a projection catches up on open.
    public var catchUpChunk = 10_000
    /// Payload, in bytes, that a rebuild (replay, verification) reads ahead
    /// of its writer and prepares on a second thread (``ProjectionSet/prepare(_:)``:
    /// decoding, tokenizing), holding what it prepared until the writer has
    /// committed it. The activity views hold about 8 bytes of memory per
    /// byte of payload (the corpus: about +130 MB at the default 16 MiB).
    /// 0: no second thread; the writer does all the work.
    public var rebuildReadAhead = 16 << 20
    /// Snapshots taken by the store itself after commits; nil: only on request.
    public var snapshotPolicy: SnapshotPolicy?
    /// Open to read only (`MDB_RDONLY`): no write transaction ever, so no
    /// waiting for a writer of this or another process, no catch-up and no
    /// rebuild of the views; the store must exist. Works on a read-only
    /// directory, such as a copy mounted for an audit (LMDB then reads
    /// without its lock file: ``LMDB/Environment/readsWithoutLock``).
    /// Reads check the views first (``EventStore/read(_:)``).
    public var readOnly = false
    /// With ``readOnly``: views that lag the log are read as they stand (as
    /// of their checkpoint; ``EventStore/viewStatus()`` says how far
    /// behind) instead of refused. Views of another projection version are
    /// refused either way.
    public var servesLaggingViews = false
    public var logger = Logger(label: "eventlog")

    public init() {}

    var environmentOptions: EnvironmentOptions {
        environmentOptions(metrics: nil)
    }

    func environmentOptions(metrics: StoreMetrics?) -> EnvironmentOptions {
        var options = EnvironmentOptions()
        if let metrics { options.commitObserver = { metrics.recordSync(nanoseconds: $0) } }
        options.durability = durability
        options.mapSize = initialMapSize
        options.maxReaders = maxReaders
        options.maxDatabases = 128
        options.readOnly = readOnly
        return options
    }
}

/// What an append may require of the log, stated by the caller.
public struct WriteOptions: Sendable, Equatable {
    /// The head position the caller expects; when another writer moved it,
    /// the write throws ``EventLogError/Code/headMismatch`` and appends nothing.
    public var expectedHead: Position?
    /// A key naming this write; a write retried with the same key (after a
    /// timeout, say) appends nothing and returns the first write's positions.
    /// At most 256 UTF-8 bytes.
    public var idempotencyKey: String?

    public init(expectedHead: Position? = nil, idempotencyKey: String? = nil) {
        self.expectedHead = expectedHead
        self.idempotencyKey = idempotencyKey
    }
}

/// The outcome of a write.
public struct WriteReceipt<Value> {
    /// What the write's closure returned; nil when the write was a retry of
    /// an earlier one with the same idempotency key (the closure did not run).
    public var value: Value?
    /// The positions appended, by this write or by the earlier one it
    /// retried; nil when none were.
    public var positions: ClosedRange<Position>?
    /// True when an earlier write with the same idempotency key was found.
    public var isRetry: Bool
    /// The first position the write redacted, if it redacted any.
    public var redactedFrom: Position? = nil
    /// The positions of the snapshots the write removed because it
    /// redacted events they were built from (those at or after
    /// ``redactedFrom``), sorted.
    public var removedSnapshots: [Position] = []
}

extension WriteReceipt: Sendable where Value: Sendable {}
