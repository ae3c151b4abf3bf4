import ActivityDomain
import ArgumentParser
import EventLog
import LMDB

struct StatsCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Head position, how far each view and the index are behind, event counts by type, bytes per database, map size and use, reader slots.",
        discussion: """
            Counting events by type walks the whole log (short read transactions, beside writers).
            A view is behind when it has not applied the whole log, or was built by another projection
            version; `eventlog replay` rebuilds it. Reader slots are "none" when the store is read without
            its lock file (a read-only directory).
            The index (the keyword index, in index/) follows the log: "index" says the position it applied
            through, how many events and how many seconds (the age of the oldest event it has not applied) it
            is behind, and its databases; an index that cannot be used (damaged, unreadable) says why ("unavailable").
            JSON: {"head","views":[{"projection","version","storedVersion","checkpoint","behind","current"}],
                   "index":{"exists","applied","behind","secondsBehind","indexing","lastFailure","unavailable",
                            "projections":[{"projection","version","storedVersion","checkpoint"}],
                            "databases":[{"name","entries","bytes"}],"mapSize","mapUsed"},
                   "eventCounts":{TYPE:N},"databases":[{"name","entries","bytes"}],
                   "mapSize","mapUsed","pageSize","readers":{"max","used","lockFile"},
                   "follow":{"stream","streamHead","streamEpoch","lag","seenAt"},"ships":[{"stream","epoch"}]};
            "follow" (a follower's lag: the stream's head when it last looked, less its own head) and
            "ships" (the streams this store ships to as their leader) are omitted when empty.

            Example:
              eventlog stats --json
            """
    )

    @OptionGroup var location: StoreLocation

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let store = try location.openForReading()
        let environment = store.eventStore.environment
        // The environment's read, not the store's: stats reports stale views rather than refusing them.
        let (head, databases, status) = try environment.read { txn -> (Position, [(name: String, stats: DatabaseStatistics)], ViewStatus) in
            var list: [(name: String, stats: DatabaseStatistics)] = []
            for name in try txn.databaseNames() {
                let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
                list.append((name, try db.statistics(in: txn)))
            }
            return (try store.eventStore.head(in: txn), list, try store.eventStore.viewStatus(in: txn))
        }
        // By bytes: two event types that differ in one byte are two types.
        let progress = Progress()
        let size = try store.eventStore.logSize(through: head) { seen, last in progress.update("counting events: \(seen) of \(last)") }
        progress.finish()
        var counts: [Name: Int] = [:]
        for (type, count) in size.types { counts[Name(String(decoding: type, as: UTF8.self)), default: 0] += count }
        let logPages = databases.first { $0.name == "log" }?.stats.bytes ?? 0
        let info = environment.info()
        let indexStatus = try store.indexStatus()
        let indexDatabases = try store.eventStore.index.map { index in
            try index.environment.read { txn in
                try txn.databaseNames().map { name -> (name: String, stats: DatabaseStatistics) in
                    let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
                    return (name, try db.statistics(in: txn))
                }
            }
        } ?? []
        let indexInfo = store.eventStore.index?.environment.info()
        let follow = try store.eventStore.followState()
        let ships = try store.eventStore.shippingEpochs()
        let lag = follow.map { $0.streamHead > head ? $0.streamHead - head : 0 }
        if json {
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
                "databases": .array(databases.map {
                    .object(["name": .string($0.name), "entries": .integer(Int64($0.stats.entries)),
                             "bytes": .integer(Int64($0.stats.bytes))])
                }),
                "log": .object([
                    "records": .integer(Int64(size.records)), "compressedRecords": .integer(Int64(size.compressedRecords)),
                    "rawBytes": .integer(Int64(size.rawBytes)), "storedBytes": .integer(Int64(size.storedBytes)),
                    "pageBytes": .integer(Int64(logPages)),
                    "dictionaries": .integer(Int64(size.dictionaries)), "dictionaryBytes": .integer(Int64(size.dictionaryBytes)),
                ]),
                "mapSize": .integer(Int64(info.mapSize)),
                "mapUsed": .integer(Int64(info.usedBytes)),
                "pageSize": .integer(Int64(info.pageSize)),
                "readers": .object(["max": .integer(Int64(info.maxReaders)), "used": .integer(Int64(info.readersUsed)),
                                    "lockFile": .bool(!environment.readsWithoutLock)]),
            ]
            if let indexStatus {
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
                    "databases": .array(indexDatabases.map {
                        .object(["name": .string($0.name), "entries": .integer(Int64($0.stats.entries)),
                                 "bytes": .integer(Int64($0.stats.bytes))])
                    }),
                ]
                if let failure = indexStatus.lastFailure { index["lastFailure"] = .string(failure) }
                if let unavailable = indexStatus.unavailable { index["unavailable"] = .string(unavailable) }
                if let indexInfo {
                    index["mapSize"] = .integer(Int64(indexInfo.mapSize))
                    index["mapUsed"] = .integer(Int64(indexInfo.usedBytes))
                }
                members["index"] = .object(index)
            }
            if let follow, let lag {
                members["follow"] = .object([
                    "stream": .string(follow.stream), "streamHead": .integer(Int64(follow.streamHead)),
                    "streamEpoch": .integer(follow.streamEpoch), "lag": .integer(Int64(lag)),
                    "seenAt": .string(Output.time(follow.seenAt)),
                ])
            }
            if !ships.isEmpty {
                members["ships"] = .array(ships.map { .object(["stream": .string($0.stream), "epoch": .integer($0.epoch)]) })
            }
            Output.json(.object(members))
            return
        }
        Output.line("store      \(environment.path)")
        Output.line("head       \(head)")
        let ratio = { (part: Int) in size.rawBytes > 0 ? String(format: "%.2fx", Double(part) / Double(size.rawBytes)) : "-" }
        Output.line("log        \(size.records) records: \(bytes(size.rawBytes)) raw, \(bytes(size.storedBytes)) stored (\(ratio(size.storedBytes))), "
            + "\(bytes(logPages)) of pages (\(ratio(logPages))); \(size.compressedRecords) compressed, "
            + "\(size.dictionaries) dictionaries of \(bytes(size.dictionaryBytes))")
        Output.line("map        \(bytes(info.usedBytes)) used of \(bytes(info.mapSize)) (page \(info.pageSize) bytes)")
        if environment.readsWithoutLock {
            Output.line("readers    none: read without the lock file (read-only directory), consistent only while nothing writes")
        } else {
            Output.line("readers    \(info.readersUsed) of \(info.maxReaders) slots in use")
        }
        if let follow, let lag {
            Output.line("follows    \(follow.stream): \(lag) records behind (stream head \(follow.streamHead) at epoch \(follow.streamEpoch), seen \(Output.time(follow.seenAt)))")
        }
        for ship in ships { Output.line("ships to   \(ship.stream) at epoch \(ship.epoch)") }
        Output.line("views      \(status.isCurrent ? "current" : "BEHIND: \(status)")")
        if let indexStatus {
            Output.line("index      \(indexStatus)")
            if let indexInfo { Output.line("index map  \(bytes(indexInfo.usedBytes)) used of \(bytes(indexInfo.mapSize))") }
        }
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
