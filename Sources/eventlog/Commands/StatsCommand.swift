import ActivityDomain
import ArgumentParser
import EventLog
import Foundation
import LMDB

struct StatsCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Head position, how far each view and the index are behind, event counts by type, bytes per database, map size and use, reader slots.",
        discussion: """
            Counting events by type walks the whole log (short read transactions, beside writers).
            A view is behind when it has not applied the whole log, or was built by another projection
            version; `eventlog replay` rebuilds it. Reader slots are "none" when the store is read without
            its lock file (a read-only directory). "oldest" is the oldest read transaction of another process
            and its age in transactions: while it is open LMDB cannot reuse the pages it reads, so data.mdb
            grows; from 100 transactions on, stats warns on stderr.
            The index (the keyword index, in index/) follows the log: "index" says the position it applied
            through, how many events and how many seconds (the age of the oldest event it has not applied) it
            is behind, and its databases; an index that cannot be used (damaged, unreadable, not built from this log) says
            why ("unavailable"); "history" is the position and link it applied through and whether the log vouches for it.
            JSON: {"head","views":[{"projection","version","storedVersion","checkpoint","behind","current"}],
                   "index":{"exists","applied","behind","secondsBehind","indexing","lastFailure","unavailable","history",
                            "projections":[{"projection","version","storedVersion","checkpoint"}],
                            "databases":[{"name","entries","bytes"}],"mapSize","mapUsed"},
                   "eventCounts":{TYPE:N},"databases":[{"name","entries","bytes"}],
                   "log":{"records","compressedRecords","rawBytes","storedBytes","pageBytes","dictionaries","dictionaryBytes"},
                   "mapSize","mapUsed","pageSize","readers":{"max","used","lockFile","oldest":{"pid","transaction","age"}},
                   "follow":{"stream","streamHead","streamEpoch","lag","seenAt"},"ships":[{"stream","epoch"}],
                   "snapshots":[{"kind","position","link","path","bytes","projections","history"}]};
            "follow" (a follower's lag: the stream's head when it last looked, less its own head) and
            "ships" (the streams this store ships to as their leader) are omitted when empty.

            Example:
              eventlog stats --json
            """
    )

    @OptionGroup var location: StoreLocation

    @Flag(help: "Print JSON.")
    var json = false

    /// A read transaction this many transactions old (or older) is warned of.
    static let oldReaderWarning = 100

    func execute() throws {
        let report = try StoreReport(try location.openForReading())
        if let oldest = report.oldest, let age = report.oldestAge, age >= Self.oldReaderWarning {
            Output.error("eventlog stats: warning: process \(oldest.pid) has held a read transaction for \(age) transactions: "
                + "LMDB cannot reuse the pages it reads, so data.mdb grows with every commit until it ends it")
        }
        if json {
            Output.json(report.json)
        } else {
            report.printText()
        }
    }
}

/// What `stats` reports of a store, read once: the log's head and views,
/// the events counted by type, the databases and the map of the store and
/// of its index, and what it follows and ships to.
private struct StoreReport {
    let path: String
    let head: Position
    let databases: [(name: String, stats: DatabaseStatistics)]
    let status: ViewStatus
    /// By bytes: two event types that differ in one byte are two types.
    let counts: [Name: Int]
    /// The log's records: raw and stored bytes, how many compressed, the dictionaries.
    let size: LogSize
    /// The pages of the `log` database.
    let logPages: Int
    let info: EnvironmentInfo
    let readsWithoutLock: Bool
    /// The oldest read transaction of another process, and how many commits it holds back.
    let oldest: ReaderSlot?
    let oldestAge: Int?
    let indexStatus: IndexStatus?
    let indexDatabases: [(name: String, stats: DatabaseStatistics)]
    let indexInfo: EnvironmentInfo?
    let follow: FollowState?
    let ships: [(stream: String, epoch: Int64)]
    /// Each snapshot with its history (its header only: `verify` checks digests).
    let snapshots: [(SnapshotInfo, DerivedHistory)]
    /// A follower's lag: the stream's head when it last looked, less its own head.
    var lag: Position? { follow.map { $0.streamHead > head ? $0.streamHead - head : 0 } }

    init(_ store: ActivityStore) throws {
        let environment = store.eventStore.environment
        // The environment's read, not the store's: stats reports stale views rather than refusing them.
        let (head, databases, status) = try environment.read { txn -> (Position, [(name: String, stats: DatabaseStatistics)], ViewStatus) in
            (try store.eventStore.head(in: txn), try StoreReport.databases(in: txn), try store.eventStore.viewStatus(in: txn))
        }
        self.head = head
        self.databases = databases
        self.status = status
        size = try StoreReport.measureLog(store, through: head)
        var counts: [Name: Int] = [:]
        for (type, count) in size.types { counts[Name(String(decoding: type, as: UTF8.self)), default: 0] += count }
        self.counts = counts
        logPages = databases.first { $0.name == "log" }?.stats.bytes ?? 0
        path = environment.path
        info = environment.info()
        readsWithoutLock = environment.readsWithoutLock
        let oldest = try environment.readers().filter { $0.pid != getpid() }.min { $0.transaction < $1.transaction }
        self.oldest = oldest
        oldestAge = oldest.map { [info] in max(0, info.lastTransaction - $0.transaction) }
        indexStatus = try store.indexStatus()
        indexDatabases = try store.eventStore.index.map { index in try index.environment.read { try StoreReport.databases(in: $0) } } ?? []
        indexInfo = store.eventStore.index?.environment.info()
        follow = try store.eventStore.followState()
        ships = try store.eventStore.shippingEpochs()
        snapshots = try (store.eventStore.snapshots(of: .views) + store.eventStore.snapshots(of: .index))
            .sorted { ($0.position, $0.kind == .index ? 1 : 0) < ($1.position, $1.kind == .index ? 1 : 0) }
            .map { ($0, try store.eventStore.history(of: $0)) }
    }

    /// Every named database of the environment `txn` reads, with its statistics.
    static func databases(in txn: ReadTransaction) throws -> [(name: String, stats: DatabaseStatistics)] {
        try txn.databaseNames().map { name -> (name: String, stats: DatabaseStatistics) in
            let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
            return (name, try db.statistics(in: txn))
        }
    }

    /// The log's records through `head` measured and counted by type, with progress on a terminal.
    static func measureLog(_ store: ActivityStore, through head: Position) throws -> LogSize {
        let progress = Progress()
        let size = try store.eventStore.logSize(through: head) { seen, last in progress.update("counting events: \(seen) of \(last)") }
        progress.finish()
        return size
    }

    // MARK: JSON

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "head": .integer(Int64(head)),
            "views": .array(status.projections.map { view in
                var members: [String: JSONValue] = [
                    "projection": .string(view.name), "version": .integer(Int64(view.version)),
                    "checkpoint": .integer(Int64(view.checkpoint)), "behind": .integer(Int64(view.eventsBehind)),
                    "current": .bool(view.isCurrent),
                ]
                if let stored = view.storedVersion { members["storedVersion"] = .integer(Int64(stored)) }
                return .object(members)
            }),
            "eventCounts": .object(counts.map { (key: $0.key.string, value: JSONValue.integer(Int64($0.value))) }),
            "databases": StoreReport.json(databases),
            "log": .object([
                "records": .integer(Int64(size.records)), "compressedRecords": .integer(Int64(size.compressedRecords)),
                "rawBytes": .integer(Int64(size.rawBytes)), "storedBytes": .integer(Int64(size.storedBytes)),
                "pageBytes": .integer(Int64(logPages)),
                "dictionaries": .integer(Int64(size.dictionaries)), "dictionaryBytes": .integer(Int64(size.dictionaryBytes)),
            ]),
            "mapSize": .integer(Int64(info.mapSize)),
            "mapUsed": .integer(Int64(info.usedBytes)),
            "pageSize": .integer(Int64(info.pageSize)),
            "readers": readersJSON,
        ]
        if let index = indexJSON { members["index"] = index }
        if let follow, let lag {
            members["follow"] = .object([
                "stream": .string(follow.stream), "streamHead": .integer(Int64(follow.streamHead)),
                "streamEpoch": .integer(follow.streamEpoch), "lag": .integer(Int64(lag)),
                "seenAt": .string(Output.time(follow.seenAt)),
            ])
        }
        members["snapshots"] = .array(snapshots.map { SnapshotCommand.json($0.0, history: $0.1) })
        if !ships.isEmpty {
            members["ships"] = .array(ships.map { .object(["stream": .string($0.stream), "epoch": .integer($0.epoch)]) })
        }
        return .object(members)
    }

    var readersJSON: JSONValue {
        var readers: [String: JSONValue] = ["max": .integer(Int64(info.maxReaders)), "used": .integer(Int64(info.readersUsed)),
                                            "lockFile": .bool(!readsWithoutLock)]
        if let oldest, let oldestAge {
            readers["oldest"] = .object(["pid": .integer(Int64(oldest.pid)), "transaction": .integer(Int64(oldest.transaction)),
                                         "age": .integer(Int64(oldestAge))])
        }
        return .object(readers)
    }

    /// The index's part: its status, projections, databases and map; nil for a store without one.
    var indexJSON: JSONValue? {
        guard let indexStatus else { return nil }
        var index: [String: JSONValue] = [
            "exists": .bool(indexStatus.exists),
            "applied": .integer(Int64(indexStatus.applied)),
            "behind": .integer(Int64(indexStatus.eventsBehind)),
            "secondsBehind": .double(indexStatus.secondsBehind),
            "indexing": .bool(indexStatus.isIndexing),
            "projections": .array(indexStatus.projections.map { view in
                var members: [String: JSONValue] = [
                    "projection": .string(view.name), "version": .integer(Int64(view.version)),
                    "checkpoint": .integer(Int64(view.checkpoint)),
                ]
                if let stored = view.storedVersion { members["storedVersion"] = .integer(Int64(stored)) }
                return .object(members)
            }),
            "databases": StoreReport.json(indexDatabases),
        ]
        if let failure = indexStatus.lastFailure { index["lastFailure"] = .string(failure) }
        if let unavailable = indexStatus.unavailable { index["unavailable"] = .string(unavailable) }
        if let history = indexStatus.history { index["history"] = VerifyCommand.json(history) }
        if let indexInfo {
            index["mapSize"] = .integer(Int64(indexInfo.mapSize))
            index["mapUsed"] = .integer(Int64(indexInfo.usedBytes))
        }
        return .object(index)
    }

    static func json(_ databases: [(name: String, stats: DatabaseStatistics)]) -> JSONValue {
        .array(databases.map {
            .object(["name": .string($0.name), "entries": .integer(Int64($0.stats.entries)),
                     "bytes": .integer(Int64($0.stats.bytes))])
        })
    }

    // MARK: Text

    func printText() {
        Output.line("store      \(path)")
        Output.line("head       \(head)")
        let ratio = { (part: Int) in size.rawBytes > 0 ? String(format: "%.2fx", Double(part) / Double(size.rawBytes)) : "-" }
        Output.line("log        \(size.records) records: \(bytes(size.rawBytes)) raw, \(bytes(size.storedBytes)) stored (\(ratio(size.storedBytes))), "
            + "\(bytes(logPages)) of pages (\(ratio(logPages))); \(size.compressedRecords) compressed, "
            + "\(size.dictionaries) dictionaries of \(bytes(size.dictionaryBytes))")
        Output.line("map        \(bytes(info.usedBytes)) used of \(bytes(info.mapSize)) (page \(info.pageSize) bytes)")
        if readsWithoutLock {
            Output.line("readers    none: read without the lock file (read-only directory), consistent only while nothing writes")
        } else {
            Output.line("readers    \(info.readersUsed) of \(info.maxReaders) slots in use"
                + (oldest.map { "; the oldest read transaction (process \($0.pid)) is \(oldestAge ?? 0) transactions old" } ?? ""))
        }
        if let follow, let lag {
            Output.line("follows    \(follow.stream): \(lag) records behind (stream head \(follow.streamHead) at epoch \(follow.streamEpoch), seen \(Output.time(follow.seenAt)))")
        }
        for ship in ships { Output.line("ships to   \(ship.stream) at epoch \(ship.epoch)") }
        Output.line("views      \(status.isCurrent ? "current" : "BEHIND: \(status)")")
        if let indexStatus {
            Output.line("index      \(indexStatus)")
            if let history = indexStatus.history { Output.line("index from \(history)") }
            if let indexInfo { Output.line("index map  \(bytes(indexInfo.usedBytes)) used of \(bytes(indexInfo.mapSize))") }
        }
        for (snapshot, history) in snapshots { Output.line("snapshot   \(snapshot.kind == .index ? "index" : "views") from \(history)") }
        Output.line("")
        Output.table(["VIEW", "VERSION", "BUILT BY", "APPLIED THROUGH", "BEHIND"], status.projections.map {
            [$0.name, String($0.version), $0.storedVersion.map(String.init) ?? "-", String($0.checkpoint),
             $0.isOtherVersion ? "other version" : String($0.eventsBehind)]
        })
        Output.line("")
        Output.table(["EVENT TYPE", "COUNT"], counts.keys.sorted().map { [$0.string, String(counts[$0]!)] })
        Output.line("")
        Output.table(["DATABASE", "ENTRIES", "BYTES"], databases.map { [$0.name, String($0.stats.entries), String($0.stats.bytes)] }
            + indexDatabases.map { ["index/" + $0.name, String($0.stats.entries), String($0.stats.bytes)] })
    }

    private func bytes(_ count: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }
}
