import Foundation
import LMDB
#if canImport(Glibc)
import Glibc
#endif

extension EventStore {
    /// Rebuilds every projection from the log and swaps the result in: the
    /// views, and the index.
    ///
    /// Builds the views in a scratch environment beside the store, from the
    /// newest snapshot stamped with this store's projection versions (unless
    /// `full`) or from position 1, up to the head at the start. Then, in one
    /// write transaction of the live store, replaces each projection's
    /// databases with the rebuilt ones, applies the events appended meanwhile,
    /// and moves the checkpoints. A reader sees the old views or the new ones,
    /// never a mix; the log is never written. Killed midway, it leaves the live
    /// views as they were (the scratch environment is removed next time).
    ///
    /// The index the same way, in a scratch index environment, by the
    /// indexer's pipeline (from the newest usable index snapshot, or
    /// position 1), swapped into the index environment in one of its
    /// transactions; a running indexer goes on from there.
    ///
    /// ```swift
    /// let report = try store.rebuild()
    /// print(report.snapshot ?? 0, report.eventsApplied, report.position)
    /// ```
    @discardableResult
    public func rebuild(full: Bool = false, progress: ((ReplayProgress) -> Void)? = nil) throws -> ReplayReport {
        let clock = ContinuousClock.now
        let start = try head()
        let serialized = SerializedProgress(progress)
        let progress = serialized.closure
        // The index is built on a thread of its own meanwhile (its own two: the feed's and its writer's).
        let indexBuild = try index.map { _ in
            try BackgroundWork("eventlog.rebuild.index") { [self] in
                try buildScratch(.index, through: start, full: full, progress: serialized.closure)
            }
        }
        defer { if let built = try? indexBuild?.result() { try? FileManager.default.removeItem(atPath: built.1) } }
        let (builder, scratch, used, damaged) = try buildScratch(.views, through: start, full: full, progress: progress)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let final = try environment.write { txn -> Position in
            try builder.target.read { rebuilt in
                try overwrite(views.all, in: txn, with: rebuilt)
            }
            // Events appended while the scratch views were built.
            let head = try databases.head(in: txn).position
            let applier = try ProjectionApplier(views.all, in: txn, log: logReader(in: txn))
            try forEachRecord(after: builder.position, through: head, in: txn) { event in
                try applier.apply(event)
                return true
            }
            try applier.finish(movingCheckpointsTo: head, in: databases.checkpoints)
            return head
        }
        progress?(ReplayProgress(phase: .swap, position: final, end: final, events: builder.eventsApplied, seconds: builder.seconds))
        var report = ReplayReport(snapshot: used, damagedSnapshots: damaged, position: final,
                                  eventsApplied: builder.eventsApplied + (final - start), seconds: builder.seconds)
        if let indexBuild { report.index = try swapIndex(try indexBuild.result(), progress: progress) }
        report.seconds = (ContinuousClock.now - clock).secondsValue
        return report
    }

    /// The index's part of ``rebuild(full:progress:)``: `built` (a scratch
    /// index) swapped into the index environment.
    private func swapIndex(_ built: (ViewBuilder<Views>, String, Position?, [Position]),
                           progress: ((ReplayProgress) -> Void)?) throws -> IndexReplayReport? {
        guard let index else { return nil }
        let (builder, _, used, damaged) = built
        let source = indexSource(index)
        let final = try index.environment.write { txn -> Position in
            try builder.target.read { rebuilt in
                try overwrite(index.views.all, in: txn, with: rebuilt)
            }
            // Events appended while the scratch index was built, in this transaction.
            var head = builder.head
            let feed = IndexFeed(log: source, after: head, readAhead: 0, end: try self.head())
            while let piece = feed.next(waiting: true) {
                if piece.events.isEmpty, let failure = piece.failure { throw IndexFailure(position: head.position + 1, error: failure) }
                let (applied, failure) = try index.target.apply(piece, thenFrom: feed, in: txn, limits: .unbounded, log: source)
                if let failure { throw IndexFailure(position: applied.position + 1, error: failure) }
                head = applied
            }
            try index.databases.setApplied(head, in: txn)
            try index.databases.checkpoints.set(index.views.all, to: head.position, in: txn)
            return head.position
        }
        progress?(ReplayProgress(phase: .swap, position: final, end: final, events: builder.eventsApplied, seconds: builder.seconds))
        return IndexReplayReport(snapshot: used, damagedSnapshots: damaged, position: final,
                                 eventsApplied: builder.eventsApplied + (final - builder.position), seconds: builder.seconds)
    }

    /// Rebuilds every projection in a scratch environment and compares it,
    /// database by database and key by key, with the live views at the same
    /// position; then the index, with the live index at the position it
    /// applied through. The live store is only read.
    ///
    /// An index that has not yet applied a forget that redacted events it
    /// applied cannot be compared (the rebuild no longer sees what it
    /// saw): in a store opened for writing, the comparison waits for the
    /// indexer to reach the head first; opened read-only, it throws
    /// ``EventLogError/Code/viewsStale``.
    ///
    /// ```swift
    /// let comparison = try store.verifyViews()
    /// if let difference = comparison.difference { print(difference) }   // "activity.current / activity.current / key phone: …"
    /// ```
    public func verifyViews(full: Bool = false, progress: ((ReplayProgress) -> Void)? = nil) throws -> ViewComparison {
        let clock = ContinuousClock.now
        let start = try head()
        let serialized = SerializedProgress(progress)
        let progress = serialized.closure
        // The index is rebuilt on a thread of its own meanwhile, through where the live one stands.
        let indexBuild = try index.map { index in
            if indexer != nil { try waitForIndex(through: start, timeout: .seconds(600)) }
            let applied = try index.applied()
            return try BackgroundWork("eventlog.verify.index") { [self] in
                try buildScratch(.index, through: applied, full: full, progress: serialized.closure)
            }
        }
        defer { if let built = try? indexBuild?.result() { try? FileManager.default.removeItem(atPath: built.1) } }
        let (builder, scratch, used, damaged) = try buildScratch(.views, through: start, full: full, progress: progress)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var comparison = try environment.read { live in
            // Writers may have moved on: bring the rebuilt views to the same position.
            let head = try databases.head(in: live).position
            while builder.position < head {
                try builder.applyChunk(through: head) { body in try body(live) }
            }
            progress?(ReplayProgress(phase: .compare, position: head, end: head, events: builder.eventsApplied, seconds: builder.seconds))
            let difference = try builder.target.read { rebuilt in
                try compare(views.all, live: live, checkpoints: databases.checkpoints, rebuilt: rebuilt, at: head)
            }
            return ViewComparison(
                report: ReplayReport(snapshot: used, damagedSnapshots: damaged, position: head,
                                     eventsApplied: builder.eventsApplied, seconds: builder.seconds),
                difference: difference)
        }
        if let indexBuild, case let (report, difference)? = try compareIndex(try indexBuild.result(), progress: progress) {
            comparison.report.index = report
            if comparison.isEqual { comparison.difference = difference }
        }
        comparison.report.seconds = (ContinuousClock.now - clock).secondsValue
        return comparison
    }

    /// The index's part of ``verifyViews(full:progress:)``: `built` (a
    /// scratch index) compared with the live index where it stands.
    private func compareIndex(_ built: (ViewBuilder<Views>, String, Position?, [Position]),
                              progress: ((ReplayProgress) -> Void)?) throws -> (IndexReplayReport, ViewDifference?)? {
        guard let index else { return nil }
        let (builder, _, used, damaged) = built
        return try index.environment.read { live in
            // The indexer may have moved on: bring the rebuilt index to the same position.
            let applied = try index.databases.applied(in: live).position
            if try redactedAfterApplying(through: applied) {
                throw EventLogError(.viewsStale, operation: "replay --verify",
                                    "the index (at \(applied)) has not yet applied a forget that redacted events it applied, so a rebuild cannot reproduce it; "
                                        + "compare once it has (open the store for writing, or run `replay`)")
            }
            try builder.apply(through: applied)
            progress?(ReplayProgress(phase: .compare, position: applied, end: applied, events: builder.eventsApplied, seconds: builder.seconds))
            let difference = try builder.target.read { rebuilt in
                try compare(index.views.all, live: live, checkpoints: index.databases.checkpoints, rebuilt: rebuilt, at: applied)
            }
            return (IndexReplayReport(snapshot: used, damagedSnapshots: damaged, position: applied,
                                      eventsApplied: builder.eventsApplied, seconds: builder.seconds), difference)
        }
    }

    /// Builds a new store in `path` holding the log up to `position` (its
    /// records copied byte for byte, so it verifies), the views as they
    /// were at that position and the index built through it by the indexer:
    /// an audit's time travel. Every read works on it.
    ///
    /// ```swift
    /// try store.replay(through: 1_000, into: "/tmp/as-of-1000")
    /// let then = try EventStore<Views>(path: "/tmp/as-of-1000")
    /// ```
    @discardableResult
    public func replay(through position: Position, into path: String, full: Bool = false,
                       progress: ((ReplayProgress) -> Void)? = nil) throws -> ReplayReport {
        let clock = ContinuousClock.now
        let head = try head()
        guard position <= head else {
            throw EventLogError(.invalidArgument, operation: "replay", "position \(position) is past the head \(head)")
        }
        if let contents = try? FileManager.default.contentsOfDirectory(atPath: path), !contents.isEmpty {
            throw EventLogError(.invalidArgument, operation: "replay", "\(path) is not empty; time travel builds a new store")
        }
        // Built aside (`.NAME.partial-PID` beside it) and moved into place only when whole: a
        // failure (a full disk) leaves nothing at `path`, never a store that looks usable.
        let name = StorePath.lastComponent(path)
        let partial = (StorePath.parent(of: path) as NSString).appendingPathComponent(".\(name).partial-\(getpid())")
        try? FileManager.default.removeItem(atPath: partial)
        do {
            let report = try replay(through: position, building: partial, full: full, progress: progress, started: clock)
            try moveIntoPlace(partial, path)
            return report
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
    }

    /// Moves the store built at `partial` to `path` (where nothing, or an
    /// empty directory, is), and syncs the directory that holds it.
    private func moveIntoPlace(_ partial: String, _ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0, rmdir(path) != 0 {
            throw EventLogError(.invalidArgument, operation: "replay", "\(path) is not empty; time travel builds a new store")
        }
        guard rename(partial, path) == 0 else {
            let code = errno
            throw EventLogError(.invalidArgument, operation: "replay",
                                "cannot move the store built at \(partial) to \(path): \(String(cString: strerror(code))) (\(code))")
        }
        let fd = open(StorePath.parent(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            Glibc.close(fd)
        }
    }

    /// ``replay(through:into:full:progress:)``'s building, in `path`.
    private func replay(through position: Position, building path: String, full: Bool,
                        progress: ((ReplayProgress) -> Void)?, started clock: ContinuousClock.Instant) throws -> ReplayReport {
        let serialized = SerializedProgress(progress)
        let progress = serialized.closure
        // The index (`path/index`) is built on a thread of its own meanwhile.
        let indexPath = EnvironmentDirectory.index(path).path
        let indexBuild = try index.map { _ in
            try BackgroundWork("eventlog.replay.index") { [self] () -> IndexReplayReport in
                let indexBuilder = try ViewBuilder(source: self, targetPath: indexPath, durability: .durable, kind: .index,
                                                   progress: serialized.closure)
                let candidates = full ? [] : try newestUsableSnapshot(of: .index, atOrBefore: position).map { [$0] } ?? []
                defer { indexBuilder.target.close() }
                let (used, damaged) = try indexBuilder.build(through: position, from: candidates)
                return IndexReplayReport(snapshot: used, damagedSnapshots: damaged, position: indexBuilder.position,
                                         eventsApplied: indexBuilder.eventsApplied, seconds: indexBuilder.seconds)
            }
        }
        defer { _ = try? indexBuild?.result() }
        let builder = try ViewBuilder(source: self, targetPath: path, durability: .durable, progress: progress)
        defer { builder.target.close() }
        let target = try builder.target.write { txn in
            let target = try LogDatabases(openingIn: txn)
            try target.metadata.setFormat(.current, in: txn)
            return target
        }
        try copyLog(through: position, into: builder.target, databases: target, progress: progress)
        try copyDictionaries(into: builder.target, databases: target)
        try copyRedactions(through: position, into: builder.target, databases: target)
        let candidates = full ? [] : try newestUsableSnapshot(atOrBefore: position).map { [$0] } ?? []
        let (used, damaged) = try builder.build(through: position, from: candidates)
        try builder.target.write { txn in
            let last = try target.head(in: txn)
            try target.setRecordedHead(last, in: txn)
            try target.setCheckpoints(of: builder.projections, to: builder.position, in: txn)
        }
        var report = ReplayReport(snapshot: used, damagedSnapshots: damaged, position: position,
                                  eventsApplied: builder.eventsApplied, seconds: builder.seconds)
        report.index = try indexBuild?.result()
        report.seconds = (ContinuousClock.now - clock).secondsValue
        return report
    }

    // MARK: Parts

    /// A scratch environment beside the store, with the views (or the index)
    /// built through `end` from the newest usable snapshot (falling back past
    /// damaged ones) or from 1.
    private func buildScratch(_ kind: ViewBuilder<Views>.Kind, through end: Position, full: Bool,
                              progress: ((ReplayProgress) -> Void)?) throws
        -> (ViewBuilder<Views>, String, Position?, [Position]) {
        removeAbandonedScratch()
        let scratch = (environment.path as NSString).appendingPathComponent("replay-scratch-\(getpid())-\(UUID().uuidString)")
        do {
            let builder = try ViewBuilder(source: self, targetPath: scratch, durability: .noSync, kind: kind, progress: progress)
            let candidates = full ? [] : try usableSnapshots(of: kind == .index ? .index : .views, projections: builder.projections,
                                                             atOrBefore: end)
            let (used, damaged) = try builder.build(through: end, from: candidates)
            return (builder, scratch, used, damaged)
        } catch {
            try? FileManager.default.removeItem(atPath: scratch)
            throw error
        }
    }

    /// Scratch environments of rebuilds whose process died.
    private func removeAbandonedScratch() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: environment.path)) ?? []
        for name in names where name.hasPrefix("replay-scratch-") {
            let pid = name.split(separator: "-").dropFirst(2).first.flatMap { Int32($0) } ?? 0
            if pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: (environment.path as NSString).appendingPathComponent(name))
            }
        }
    }

    /// Copies records 1…`end` byte for byte into `target`'s log.
    private func copyLog(through end: Position, into target: Environment, databases targetDatabases: LogDatabases,
                         progress: ((ReplayProgress) -> Void)?) throws {
        var next: Position = 1
        let started = DispatchTime.now().uptimeNanoseconds
        while next <= end {
            // The closure may run again after the map grows: it reads from
            // `start`, and `next` moves only once the transaction committed.
            let start = next
            next = try target.write { txn in
                try environment.read { live in
                    var walk = try LogWalk(databases, from: start, in: live)
                    while walk.expected - start < 20_000, walk.expected <= end, let (position, value) = try walk.next() {
                        try position.withEncodedBytes { key in
                            try targetDatabases.log.putBytes(value, forKey: key, flags: .append, in: txn)
                        }
                    }
                    try walk.checkReached(min(end, start + 19_999))
                    return walk.expected
                }
            }
            progress?(ReplayProgress(phase: .copyLog, position: next - 1, end: end, events: next - 1,
                                     seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9))
        }
    }

    /// Gives a copy of the log through `end` what authorizes its redacted
    /// records: the `redactions` entries of redaction records up to `end`,
    /// and, for records redacted by one past `end` (time travel to before a
    /// forget), that record as a pending authorization, as a restore to the
    /// same position holds it (`Docs/LogFormat.md`, "Pending
    /// authorizations"). So the copy verifies, and never shows what the
    /// redaction removed.
    private func copyRedactions(through end: Position, into target: Environment, databases targetDatabases: LogDatabases) throws {
        try target.write { txn in
            try environment.read { live in
                var pending = Set<Position>()
                let cursor = try databases.redactions.cursor(in: live)
                var entry = try cursor.firstBytes()
                while let (key, value) = entry {
                    if value.count == 16 {
                        let first = UInt64(bigEndian: value.loadUnaligned(as: UInt64.self))
                        let by = UInt64(bigEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                        if by <= end {
                            try targetDatabases.redactions.putBytes(value, forKey: key, in: txn)
                        } else if first <= end {
                            pending.insert(by)
                        }
                    }
                    entry = try cursor.nextBytes()
                }
                for by in pending {
                    if let bytes = try databases.log.get(by, in: live) {
                        try targetDatabases.meta.put(bytes, forKey: LogDatabases.pendingRedactionKey(by), in: txn)
                    }
                }
                // This store's own pending authorizations (a follower's, a restore's) lie past its head, so past `end`.
                for record in try databases.pendingRedactions(in: live) {
                    try targetDatabases.meta.put(record.bytes, forKey: LogDatabases.pendingRedactionKey(record.position), in: txn)
                }
            }
        }
    }

    /// Makes each database of `projections` in `txn` hold exactly what it
    /// holds in `rebuilt` (``overwrite(_:in:with:in:)``).
    private func overwrite(_ projections: [any Projection], in txn: WriteTransaction, with rebuilt: ReadTransaction) throws {
        for projection in projections {
            for name in projection.databaseNames {
                let live: Database<[UInt8], [UInt8]> = try txn.createDatabase(name)
                let source: Database<[UInt8], [UInt8]> = try rebuilt.openDatabase(name)
                try overwrite(live, in: txn, with: source, in: rebuilt)
            }
        }
    }

    /// Makes `live` hold exactly the pairs of `rebuilt`, writing only where
    /// they differ: one ordered walk of both, a put where a key is missing
    /// or its value differs, a delete where a key is extra. A rebuild of
    /// views that were right (the usual case) reads both and writes nothing,
    /// instead of emptying every view and writing it again (every page
    /// dirty in one transaction, the file grown by the views' size, all of
    /// it fsynced); what readers see afterwards is the same.
    private func overwrite(_ live: Database<[UInt8], [UInt8]>, in txn: WriteTransaction,
                           with rebuilt: Database<[UInt8], [UInt8]>, in source: ReadTransaction) throws {
        let target = try live.cursor(in: txn)
        let cursor = try rebuilt.cursor(in: source)
        var x = try target.firstBytes(), y = try cursor.firstBytes()
        while let (newKey, newValue) = y {
            guard let (key, value) = x else {
                // Past the live view's last key: the rest goes at the end.
                try target.putBytes(newKey, newValue, flags: .append)
                y = try cursor.nextBytes()
                continue
            }
            let order = KeyOrder.compare(key, newKey)
            if order < 0 {
                // A key the rebuilt view does not have. After the delete, MDB_NEXT gives its successor.
                try target.deleteCurrent()
                x = try target.nextBytes()
            } else if order > 0 {
                // Missing: inserted before the live key, which then follows it (the old bytes are not used again).
                try target.putBytes(newKey, newValue)
                x = try target.nextBytes()
                y = try cursor.nextBytes()
            } else {
                if KeyOrder.compare(value, newValue) != 0 { try target.putBytes(newKey, newValue) }
                x = try target.nextBytes()
                y = try cursor.nextBytes()
            }
        }
        while x != nil {
            try target.deleteCurrent()
            x = try target.nextBytes()
        }
    }

    /// The first difference between live and rebuilt databases of
    /// `projections`, projection by projection, then their checkpoints in
    /// `checkpoints` (the live environment's).
    private func compare(_ projections: [any Projection], live: ReadTransaction, checkpoints: CheckpointTable,
                         rebuilt: ReadTransaction, at head: Position) throws -> ViewDifference? {
        for projection in projections {
            for name in projection.databaseNames {
                let a: Database<[UInt8], [UInt8]> = try live.openDatabase(name)
                let b: Database<[UInt8], [UInt8]> = try rebuilt.openDatabase(name)
                let liveCursor = try a.cursor(in: live), rebuiltCursor = try b.cursor(in: rebuilt)
                var x = try liveCursor.firstBytes(), y = try rebuiltCursor.firstBytes()
                while x != nil || y != nil {
                    func differ(_ key: UnsafeRawBufferPointer, _ detail: String) -> ViewDifference {
                        ViewDifference(projection: projection.name, database: name, key: [UInt8](key), detail: detail)
                    }
                    guard let (lk, lv) = x else { return differ(y!.key, "missing from the live view") }
                    guard let (rk, rv) = y else { return differ(lk, "in the live view, not in the rebuilt one") }
                    let order = KeyOrder.compare(lk, rk)
                    if order < 0 { return differ(lk, "in the live view, not in the rebuilt one") }
                    if order > 0 { return differ(rk, "missing from the live view") }
                    if KeyOrder.compare(lv, rv) != 0 { return differ(lk, "values differ (\(lv.count) live bytes, \(rv.count) rebuilt)") }
                    x = try liveCursor.nextBytes()
                    y = try rebuiltCursor.nextBytes()
                }
            }
            // An empty store never written (no database yet) has no checkpoint: as good as one at 0.
            let checkpoint = try checkpoints.checkpoint(of: projection.name, in: live)
                ?? (head == 0 ? Checkpoint(position: 0, version: projection.version) : nil)
            if checkpoint != Checkpoint(position: head, version: projection.version) {
                return ViewDifference(projection: projection.name, database: "meta", key: Array(CheckpointTable.key(projection.name).utf8),
                                      detail: "checkpoint \(checkpoint.map { "\($0.position) v\($0.version)" } ?? "missing"), head \(head) v\(projection.version)")
            }
        }
        return nil
    }
}
