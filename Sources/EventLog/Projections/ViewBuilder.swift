import Foundation
import LMDB

/// Builds a store's views, or its index, in another environment from its
/// log: from a snapshot or position 1. The target is a scratch environment
/// (rebuild, verification) or a new store (time travel).
///
/// The views are applied in transactions of at most `chunk` events and
/// about `chunkBytes` of payload (LMDB holds a write transaction's dirty
/// pages in memory until it commits, so a few large events, such as batches
/// of 500 items, must not make one huge transaction). The index is built by
/// the indexer's own pipeline (``IndexFeed``, ``IndexTarget``): a rebuild
/// of the index is the indexer run from position 1 into an empty index
/// environment.
final class ViewBuilder<Views: ProjectionSet> {
    enum Kind {
        /// The store's views (``ProjectionSet/all``).
        case views
        /// The store's index (``ProjectionSet/Index``).
        case index
    }

    let source: EventStore<Views>
    let target: Environment
    let kind: Kind
    /// What is built: the views' projections, or the index's.
    let projections: [any Projection]
    /// The index environment's own database in the target (``Kind/index``).
    private let indexDatabases: IndexDatabases?
    private(set) var position: Position = 0
    /// The link of the record at ``position`` (``Kind/index``: its checkpoint).
    private var link = ChainLink.zero
    private(set) var eventsApplied: UInt64 = 0
    /// Where the build stands: ``position`` and its record's link.
    var head: RecordedHead { RecordedHead(position: position, link: link) }
    var chunk = 10_000
    var chunkBytes = 4 << 20
    let progress: ((ReplayProgress) -> Void)?
    let started = DispatchTime.now().uptimeNanoseconds

    init(source: EventStore<Views>, targetPath: String, durability: Durability, kind: Kind = .views,
         progress: ((ReplayProgress) -> Void)?) throws {
        self.source = source
        self.kind = kind
        var options = EnvironmentOptions()
        options.durability = durability
        options.maxDatabases = 128
        // Twice the live map's size: the views fit in it with room for the
        // pages a large chunk frees and cannot reuse before it commits, so a
        // chunk is rarely written twice (a full map aborts the write, which
        // runs again once the map grew). It reserves addresses, not disk.
        let live = kind == .index ? (source.index?.environment ?? source.environment) : source.environment
        options.mapSize = 2 * live.info().mapSize
        target = try Environment(path: targetPath, options: options)
        switch kind {
        case .views:
            projections = try target.write { try Views(openingIn: $0).all }
            indexDatabases = nil
        case .index:
            (projections, indexDatabases) = try target.write { txn in
                let databases = try IndexDatabases(openingIn: txn)
                try databases.metadata.setFormat(.index, in: txn)
                let projections = try source.views.openIndex(in: txn).all
                try databases.clear(projections, in: txn)
                return (projections, databases)
            }
        }
        self.progress = progress
        try checkDatabasesAreListed()
    }

    /// In a fresh environment, every database the projections opened must
    /// be listed by some projection's `databaseNames`: one that is not would
    /// be left out of every rebuild, snapshot and comparison.
    private func checkDatabasesAreListed() throws {
        let listed = Set(projections.flatMap(\.databaseNames) + (kind == .index ? IndexDatabases.names : []))
        let opened = try target.read { try $0.databaseNames() }
        if let stray = opened.first(where: { !listed.contains($0) }) {
            throw EventLogError(.invalidArgument, operation: "replay",
                                "the projections open database \(stray), which no projection lists in databaseNames; rebuilds and snapshots would miss it")
        }
    }

    var seconds: Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }

    /// Loads `snapshot` into the target's views. False, with the views
    /// emptied again, when the file is damaged (cut short, or its digest
    /// fails); other errors are thrown.
    ///
    /// Entries are read into memory a chunk at a time and only then written:
    /// a write transaction may run again after the map grows, so it must not
    /// consume the stream itself.
    func load(_ snapshot: SnapshotInfo) throws -> Bool {
        try clear()
        do {
            // The whole file first: a damaged one must not reach the views,
            // nor drive what is read (a flipped length, a database name).
            guard source.verifySnapshot(snapshot) else {
                throw EventLogError(.snapshot, operation: "snapshot load", "\(snapshot.path) is cut short or its digest does not match")
            }
            let reader = try SnapshotFile.Reader(path: snapshot.path)
            let header = try reader.readHeader()
            // The log vouches for the snapshot as it is read (it may have been replaced since it was listed).
            let history = try source.environment.read {
                try DerivedHistory.of(position: header.position, link: header.link, log: source.databases, in: $0)
            }
            guard history.isThisLog else {
                throw EventLogError(.snapshot, operation: "snapshot load", "\(snapshot.path) was not built from this log: \(history)")
            }
            let expected = projections.map { ($0.name, $0.version, $0.databaseNames) }
            guard header.projections.elementsEqual(expected, by: { $0.name == $1.0 && $0.version == $1.1 && $0.databases == $1.2 }) else {
                throw EventLogError(.snapshot, operation: "snapshot load", "\(snapshot.path) holds other projections or databases than these views")
            }
            for projection in header.projections {
                for name in projection.databases {
                    let db = try target.write { try $0.createDatabase(name, as: [UInt8].self, [UInt8].self) }
                    var remaining = try reader.read(UInt64.self)
                    var chunk = EntryChunk()
                    while remaining > 0 {
                        chunk.removeAll()
                        while remaining > 0 && chunk.count < 20_000 && chunk.bytes.count < 16 << 20 {
                            let key = try reader.read(Int(try reader.read(UInt32.self)))
                            let value = try reader.read(Int(try reader.read(UInt32.self)))
                            chunk.append(key: key, value: value)
                            remaining -= 1
                        }
                        do {
                            try target.write { txn in
                                try chunk.forEach { key, value in
                                    try db.putBytes(value, forKey: key, flags: .append, in: txn)
                                }
                            }
                        } catch let error as LMDBError where error == .badValueSize || error == .keyExists {
                            // Sealed, yet not what a snapshot holds: an empty or oversized key, keys out of order.
                            throw EventLogError(.snapshot, operation: "snapshot load", "\(snapshot.path): \(name): \(error)")
                        }
                    }
                }
            }
            guard try reader.checkDigest() else {
                throw EventLogError(.snapshot, operation: "snapshot load", "\(snapshot.path): the digest does not match")
            }
            position = header.position
            if kind == .index { try startIndex(atSnapshot: snapshot) }
            progress?(ReplayProgress(phase: .snapshot, position: position, end: position, events: 0, seconds: seconds))
            return true
        } catch let error as EventLogError where error.code == .snapshot {
            source.options.logger.warning("damaged snapshot ignored", metadata: ["snapshot": "\(snapshot.path)", "error": "\(error)"])
            try clear()
            return false
        } catch where !FileManager.default.fileExists(atPath: snapshot.path) {
            // Pruned by another process's `snapshot create` while this one
            // read it (found by the torture test): gone, so skipped as a
            // damaged one is, never an error that stops the rebuild.
            source.options.logger.notice("snapshot removed while loading, ignored", metadata: ["snapshot": "\(snapshot.path)"])
            try clear()
            return false
        }
    }

    /// Builds the views through `end` from the first of `candidates` (newest
    /// first) that loads and that the log continues from, else from position
    /// 1. A snapshot that fails to load, or after which the log does not
    /// apply (a sealed file whose views are not the log's at its position:
    /// forged, or written by a faulty build of the same versions), is
    /// damaged: skipped, never an error that stops the rebuild.
    func build(through end: Position, from candidates: [SnapshotInfo]) throws -> (used: Position?, damaged: [Position]) {
        var damaged: [Position] = []
        for snapshot in candidates {
            // Taken while a redaction of earlier events was being written
            // (another process's snapshot, renamed after the redaction
            // removed the others): it holds what was erased.
            if try source.redactedLater(than: snapshot.position) {
                source.options.logger.notice("snapshot ignored: a later redaction removed events it was built from",
                                             metadata: ["snapshot": "\(snapshot.path)"])
                continue
            }
            guard try load(snapshot) else {
                damaged.append(snapshot.position)
                continue
            }
            do {
                try apply(through: end)
                return (snapshot.position, damaged)
            } catch {
                source.options.logger.warning("snapshot ignored: the log does not apply after it",
                                              metadata: ["snapshot": "\(snapshot.path)", "error": "\(error)"])
                damaged.append(snapshot.position)
                try clear()
                eventsApplied = 0
            }
        }
        try apply(through: end)
        return (nil, damaged)
    }

    private func clear() throws {
        try target.write { txn in
            if let indexDatabases {
                try indexDatabases.clear(projections, in: txn)
            } else {
                for projection in projections { try projection.removeAllData(in: txn) }
            }
        }
        position = 0
        link = .zero
    }

    /// An index loaded from a snapshot goes on from the snapshot's position,
    /// whose link is the log's there.
    private func startIndex(atSnapshot snapshot: SnapshotInfo) throws {
        guard let found = try source.environment.read({ try source.databases.link(at: position, in: $0) }) else {
            throw EventLogError(.snapshot, operation: "snapshot load", "\(snapshot.path) is at position \(position), past the log's head")
        }
        link = found
        let head = RecordedHead(position: position, link: link)
        try target.write { txn in
            try indexDatabases!.setApplied(head, in: txn)
            try indexDatabases!.checkpoints.set(projections, to: position, in: txn)
        }
    }

    /// Applies the source's log after ``position`` through `end`.
    func apply(through end: Position) throws {
        if kind == .index { return try applyIndex(through: end) }
        while position < end {
            try applyChunk(through: end) { body in try source.environment.read(body) }   // the log only: never refused as stale
            progress?(ReplayProgress(phase: .log, position: position, end: end, events: eventsApplied, seconds: seconds))
        }
    }

    /// The index through `end`: the indexer's pipeline, the feed preparing
    /// on threads of its own (``StoreOptions/indexReadAhead``).
    private func applyIndex(through end: Position) throws {
        guard position < end else { return }
        let log = IndexFeed.LogSource(environment: source.environment, databases: source.databases, projections: projections,
                                      commits: source.commits)
        let indexTarget = IndexTarget(environment: target, databases: indexDatabases!, projections: projections)
        var head = RecordedHead(position: position, link: link)
        let feed = IndexFeed(log: log, after: head, readAhead: source.options.indexReadAhead, end: end)
        try feed.start()
        defer { feed.stop() }
        while head.position < end {
            guard let piece = feed.next(waiting: true) else {
                throw EventLogError(.corrupt, operation: "replay", "the log ends before position \(end)", position: head.position + 1)
            }
            let before = head.position
            head = try indexTarget.apply(piece, thenFrom: feed, expecting: head, limits: .rebuild, log: log)
            (position, link) = (head.position, head.link)
            eventsApplied += head.position - before
            progress?(ReplayProgress(phase: .index, position: position, end: end, events: eventsApplied, seconds: seconds))
        }
    }

    /// Applies up to ``chunk`` events (or ``chunkBytes`` of payload), read in a live transaction that
    /// `reading` provides, in one target transaction. ``position`` moves only
    /// once that commits: a transaction retried after the map grew must not
    /// skip events.
    func applyChunk(through end: Position, reading: ((ReadTransaction) throws -> Int) throws -> Int) throws {
        let start = position
        let applied = try target.write { txn in
            try reading { live in
                // The log is the source's, read in the transaction the events are read in.
                let applier = try ProjectionApplier(projections, in: txn, log: source.logReader(in: live))
                var applied = 0, bytes = 0
                try source.forEachRecord(after: start, through: end, in: live) { event in
                    try applier.apply(event)
                    applied += 1
                    bytes += event.payload.count
                    return applied < chunk && bytes < chunkBytes
                }
                try applier.finish()
                return applied
            }
        }
        position = start + UInt64(applied)
        eventsApplied += UInt64(applied)
    }
}

/// Key/value pairs held in one buffer between reading and writing them.
struct EntryChunk {
    private(set) var bytes: [UInt8] = []
    private var bounds: [(key: Range<Int>, value: Range<Int>)] = []
    var count: Int { bounds.count }

    mutating func append(key: ArraySlice<UInt8>, value: ArraySlice<UInt8>) {
        let k = bytes.count..<(bytes.count + key.count)
        bytes.append(contentsOf: key)
        let v = bytes.count..<(bytes.count + value.count)
        bytes.append(contentsOf: value)
        bounds.append((k, v))
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        bounds.removeAll(keepingCapacity: true)
    }

    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { all in
            for (k, v) in bounds {
                try body(UnsafeRawBufferPointer(rebasing: all[k]), UnsafeRawBufferPointer(rebasing: all[v]))
            }
        }
    }
}
