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
    /// Read once per write, when the write is handed over
    /// (``WriteOptions/time`` overrides it); projections never read it.
    public var clock: @Sendable () -> Date = { Date() }
    /// How many concurrent writers' batches may share one transaction (and
    /// one fsync). 1 turns group commit off.
    public var maxGroupCommit = 64
    /// Events per transaction while a projection catches up on open.
    public var catchUpChunk = 10_000
    /// Payload, in bytes, that the indexer reads and prepares ahead of its
    /// writer, on threads of their own (two where there are two cores:
    /// ``Projection/prepare(_:log:)``: decoding, tokenizing), holding what
    /// they prepared until the writer takes it: live, in rebuilds,
    /// verifications and time travel alike. The activity index holds about
    /// 8 bytes of memory per byte of payload. 0: no preparing thread; the
    /// writer does all the work.
    public var indexReadAhead = 16 << 20
    /// What the index environment's commits wait for. The index is derived
    /// (rebuilt from the log when lost), but a store that `noSync` left
    /// damaged after a machine crash is damaged silently: ``Durability/noSync``
    /// is refused; ``Durability/noMetaSync`` may undo its last commit, which
    /// the indexer then applies again.
    public var indexDurability: Durability = .durable
    /// A store opened for writing runs the indexer on threads of its own,
    /// from open to close. False: the index moves only through
    /// ``EventStore/catchUpIndex(through:)`` and the rebuilds (`eventlog
    /// replay`, which rebuilds it whole and needs no indexer beside it).
    public var indexesInBackground = true
    /// How large the indexer's transactions grow (``IndexTransactionLimits``).
    public var indexTransactionLimits = IndexTransactionLimits.live
    /// Payload, in bytes, that this store's writes may have appended ahead
    /// of its indexer (not yet taken into one of its transactions): a write
    /// that leaves more returns only once the indexer is back under it
    /// (waiting at most ``indexBacklogWait``). So under a load the indexer
    /// cannot keep up with, writes slow to its pace instead of piling up a
    /// backlog that delays searchability without end, and the cores go to
    /// the indexer. About 30 ms of indexing, so that a write is searchable
    /// within about two of the indexer's transactions (measured at batch
    /// 500 against 4 MiB: about 3× lower lag p99, within 3 % of the rate;
    /// `Benchmarks/History/2026-11-notebook.md`). nil: never wait.
    public var indexBacklogLimit: Int? = 512 << 10
    /// The longest a write waits for the indexer's backlog (a stopped or
    /// failing indexer never holds writes up for longer).
    public var indexBacklogWait: Duration = .seconds(1)
    /// Snapshots taken by the store itself after commits; nil: only on request.
    public var snapshotPolicy: SnapshotPolicy?
    /// Payload bytes written without a dictionary after which the store
    /// trains one (in the background, `Docs/LogFormat.md`, "Dictionaries"),
    /// and, with one, the bytes over which it watches how well it
    /// compresses (retraining when it compresses 15 % worse than over the
    /// first such stretch). nil (the engine's default; an `ActivityStore`
    /// trains after 4 MiB): only `compact` and ``EventStore/trainDictionary()``
    /// train. The training runs on a thread of its own that holds the
    /// store until it ends (a second or two), as an automatic snapshot does.
    public var dictionaryTrainingBytes: Int?
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
    /// The write's time (``LogBatch/time``): what its events record when
    /// they carry no time of their own. nil: the store's clock, read once
    /// when the write is handed over.
    public var time: Date?

    public init(expectedHead: Position? = nil, idempotencyKey: String? = nil, time: Date? = nil) {
        self.expectedHead = expectedHead
        self.idempotencyKey = idempotencyKey
        self.time = time
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
    /// Payload bytes the write appended (what the indexer has to apply).
    var appendedBytes = 0
    /// The positions of the snapshots the write removed because it
    /// redacted events they were built from (those at or after
    /// ``redactedFrom``), sorted.
    public var removedSnapshots: [Position] = []
}

extension WriteReceipt: Sendable where Value: Sendable {}
