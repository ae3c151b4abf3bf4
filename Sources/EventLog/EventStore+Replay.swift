import Foundation
import LMDB

extension EventStore {
    /// Rebuilds every projection from the log and swaps the result in.
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
    /// ```swift
    /// let report = try store.rebuild()
    /// print(report.snapshot ?? 0, report.eventsApplied, report.position)
    /// ```
    @discardableResult
    public func rebuild(full: Bool = false, progress: ((ReplayProgress) -> Void)? = nil) throws -> ReplayReport {
        let start = try head()
        let (builder, scratch, used, damaged) = try buildScratch(through: start, full: full, progress: progress)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let final = try environment.write { txn -> Position in
            try builder.target.read { rebuilt in
                for projection in views.all {
                    for name in projection.databaseNames {
                        let live: Database<[UInt8], [UInt8]> = try txn.createDatabase(name)
                        let source: Database<[UInt8], [UInt8]> = try rebuilt.openDatabase(name)
                        try overwrite(live, in: txn, with: source, in: rebuilt)
                    }
                }
            }
            // Events appended while the scratch views were built.
            let head = try databases.head(in: txn).position
            let log = logReader(in: txn)
            let writers = try views.all.map { try $0.makeWriter(in: txn, log: log) }
            try forEachRecord(after: builder.position, through: head, in: txn) { event in
                for writer in writers { try writer.apply(event) }
                return true
            }
            for writer in writers { try writer.finish() }
            try databases.setCheckpoints(of: views.all, to: head, in: txn)
            return head
        }
        progress?(ReplayProgress(phase: .swap, position: final, end: final, events: builder.eventsApplied, seconds: builder.seconds))
        return ReplayReport(snapshot: used, damagedSnapshots: damaged, position: final,
                            eventsApplied: builder.eventsApplied + (final - start), seconds: builder.seconds)
    }

    /// Rebuilds every projection in a scratch environment and compares it,
    /// database by database and key by key, with the live views at the same
    /// position. The live store is only read.
    ///
    /// ```swift
    /// let comparison = try store.verifyViews()
    /// if let difference = comparison.difference { print(difference) }   // "activity.current / activity.current / key phone: …"
    /// ```
    public func verifyViews(full: Bool = false, progress: ((ReplayProgress) -> Void)? = nil) throws -> ViewComparison {
        let start = try head()
        let (builder, scratch, used, damaged) = try buildScratch(through: start, full: full, progress: progress)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        return try environment.read { live in
            // Writers may have moved on: bring the rebuilt views to the same position.
            let head = try databases.head(in: live).position
            while builder.position < head {
                try builder.applyChunk(through: head) { body in try body(live) }
            }
            progress?(ReplayProgress(phase: .compare, position: head, end: head, events: builder.eventsApplied, seconds: builder.seconds))
            let difference = try builder.target.read { rebuilt in try compare(live: live, rebuilt: rebuilt, at: head) }
            return ViewComparison(
                report: ReplayReport(snapshot: used, damagedSnapshots: damaged, position: head,
                                     eventsApplied: builder.eventsApplied, seconds: builder.seconds),
                difference: difference)
        }
    }

    /// Builds a new store in `path` holding the log up to `position` (its
    /// records copied byte for byte, so it verifies) and the views as they
    /// were at that position: an audit's time travel. Every read works on it.
    ///
    /// ```swift
    /// try store.replay(through: 1_000, into: "/tmp/as-of-1000")
    /// let then = try EventStore<Views>(path: "/tmp/as-of-1000")
    /// ```
    @discardableResult
    public func replay(through position: Position, into path: String, full: Bool = false,
                       progress: ((ReplayProgress) -> Void)? = nil) throws -> ReplayReport {
        let head = try head()
        guard position <= head else {
            throw EventLogError(.invalidArgument, operation: "replay", "position \(position) is past the head \(head)")
        }
        if let contents = try? FileManager.default.contentsOfDirectory(atPath: path), !contents.isEmpty {
            throw EventLogError(.invalidArgument, operation: "replay", "\(path) is not empty; time travel builds a new store")
        }
        let builder = try ViewBuilder(source: self, targetPath: path, durability: .durable, progress: progress)
        let target = try builder.target.write { txn in
            let target = try LogDatabases(openingIn: txn)
            try target.setFormat(.current, in: txn)
            return target
        }
        try copyLog(through: position, into: builder.target, databases: target, progress: progress)
        try copyRedactions(through: position, into: builder.target, databases: target)
        let candidates = full ? [] : try newestUsableSnapshot(atOrBefore: position).map { [$0] } ?? []
        let (used, damaged) = try builder.build(through: position, from: candidates)
        try builder.target.write { txn in
            let last = try target.head(in: txn)
            try target.setRecordedHead(last, in: txn)
            try target.setCheckpoints(of: builder.views.all, to: builder.position, in: txn)
        }
        return ReplayReport(snapshot: used, damagedSnapshots: damaged, position: position,
                            eventsApplied: builder.eventsApplied, seconds: builder.seconds)
    }

    // MARK: Parts

    /// A scratch environment beside the store, with views built through `end`
    /// from the newest usable snapshot (falling back past damaged ones) or from 1.
    private func buildScratch(through end: Position, full: Bool, progress: ((ReplayProgress) -> Void)?) throws
        -> (ViewBuilder<Views>, String, Position?, [Position]) {
        removeAbandonedScratch()
        let scratch = (environment.path as NSString).appendingPathComponent("replay-scratch-\(getpid())-\(UUID().uuidString)")
        do {
            let builder = try ViewBuilder(source: self, targetPath: scratch, durability: .noSync, progress: progress)
            var candidates: [SnapshotInfo] = []
            if !full {
                let wanted = Set(views.all.map { SnapshotInfo.ProjectionStamp(name: $0.name, version: $0.version) })
                candidates = try snapshots().reversed().filter { $0.position <= end && Set($0.projections) == wanted }
            }
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

    /// The first difference between live and rebuilt databases, projection by
    /// projection, then the checkpoints.
    private func compare(live: ReadTransaction, rebuilt: ReadTransaction, at head: Position) throws -> ViewDifference? {
        for projection in views.all {
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
            let checkpoint = try databases.checkpoint(of: projection.name, in: live)
            if checkpoint != Checkpoint(position: head, version: projection.version) {
                return ViewDifference(projection: projection.name, database: "meta", key: Array(("checkpoint:" + projection.name).utf8),
                                      detail: "checkpoint \(checkpoint.map { "\($0.position) v\($0.version)" } ?? "missing"), head \(head) v\(projection.version)")
            }
        }
        return nil
    }
}
