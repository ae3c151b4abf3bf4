import ActivityDomain
import ArgumentParser
import EventLog
import Foundation
import LogShipping
import Logging

/// `--to`/`--from URL` and `--stream NAME`, shared by ship, follow and restore.
struct StreamLocation: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The stream's name in PostgreSQL: 1 to 128 of A-Z a-z 0-9 . _ -; a shard is a stream.", valueName: "name"))
    var stream: String

    func location(_ url: String) throws -> PostgresLocation { try PostgresLocation(url: url) }
}

/// The engine's and the shipping's notices on stderr, never on stdout.
func shippingLogger(_ label: String) -> Logger {
    var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .notice
    return logger
}

/// A ``Progress`` display fed from shipping's `@Sendable` callbacks.
final class SharedProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let progress = Progress()

    func update(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        progress.update(text)
    }

    func finish() {
        lock.lock()
        defer { lock.unlock() }
        progress.finish()
    }
}

func shipJSON(_ report: ShipProgress, link: ChainLink? = nil) -> JSONValue {
    .object([
        "stream": .string(report.stream),
        "epoch": .integer(report.epoch),
        "streamHead": .integer(Int64(report.position)),
        "link": .string("\(link ?? report.link)"),
        "storeHead": .integer(Int64(report.storeHead)),
        "records": .integer(Int64(report.records)),
        "bytes": .integer(Int64(report.bytes)),
        "seconds": .double(report.seconds),
    ])
}

struct ShipCommand: AsyncSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "ship",
        abstract: "Copy the store's committed records, byte for byte, into a stream in PostgreSQL.",
        discussion: """
            Each batch is one PostgreSQL transaction that locks the stream's head row and checks that the
            batch follows it (same epoch, position + 1, previous link); it starts from PostgreSQL's head, so
            after a crash of either side it resumes there. The tables are created on first use
            (Docs/Scaling.md). Without --once it keeps following the log (seeing another process's commits
            within 100 ms) and waits out PostgreSQL being down; a fork, or a fence after another store took
            over, ends it with an error naming the position.
            --take-over: this store, a follower that has caught up with the stream, starts a new epoch and
            becomes its leader; the old leader's next batch is refused.
            JSON (with --once): {"stream","epoch","streamHead","link","storeHead","records","bytes","seconds"}.

            Examples:
              eventlog ship --store /var/lib/app/events --to postgres://app@db/events --stream shard-1
              eventlog ship --to postgres://app@db/events --stream shard-1 --once --json
              eventlog ship --store /var/lib/app/follower --to postgres://app@db/events --stream shard-1 --take-over
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var stream: StreamLocation

    @Option(help: ArgumentHelp("The PostgreSQL URL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…].", valueName: "url"))
    var to: String

    @Flag(help: "Stop once PostgreSQL holds the whole log.")
    var once = false

    @Flag(name: .customLong("take-over"), help: "Start a new epoch from this caught-up follower (failover).")
    var takeOver = false

    @Option(help: "Records per PostgreSQL transaction, at most.")
    var batch = 1_000

    @Flag(help: "Print JSON.")
    var json = false

    func execute() async throws {
        let postgres = try stream.location(to)
        let store = try location.openExisting()
        var options = ShipOptions()
        options.takeOver = takeOver
        options.batchRecords = batch
        options.logger = shippingLogger("eventlog.ship")
        let shipper = try LogShipper(store: store.eventStore, to: postgres, stream: stream.stream, options: options)
        let progress = SharedProgress()
        let report = try await shipper.run(once: once) { p in
            progress.update("shipping \(p.stream): position \(p.position) of \(p.storeHead), \(p.records) records, \(p.bytes >> 20) MiB")
        }
        progress.finish()
        if json {
            Output.json(shipJSON(report))
        } else {
            Output.line("shipped \(report.records) records (\(report.bytes) bytes) to \(report.stream) at epoch \(report.epoch); its head is \(report.position), link \(report.link)")
        }
    }
}

struct FollowCommand: AsyncSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "follow",
        abstract: "Build a follower: append a PostgreSQL stream's records to the store, so it holds the leader's views.",
        discussion: """
            Appends the exact records, checking each link against the one before as it arrives; the
            projections apply them in the same transactions, so every read command works on the follower
            and `eventlog replay --verify` holds. Creates the store when missing. Without --once it keeps
            following: woken by NOTIFY, and asking PostgreSQL at least every 500 ms. `eventlog stats`
            reports its lag. A fork (a record whose link does not follow, or a store ahead of the stream)
            stops it with an error naming the position; --resync then deletes the store's files and
            rebuilds it from the stream.
            JSON (with --once): {"stream","epoch","streamHead","link","storeHead","records","bytes","seconds"}.

            Examples:
              eventlog follow --from postgres://app@db/events --stream shard-1 --store /var/lib/app/follower
              eventlog follow --from postgres://app@db/events --stream shard-1 --store /tmp/f --once --json
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var stream: StreamLocation

    @Option(help: ArgumentHelp("The PostgreSQL URL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…].", valueName: "url"))
    var from: String

    @Flag(help: "Stop once the store holds the whole stream.")
    var once = false

    @Flag(help: "Delete the store's files first and rebuild it from the stream.")
    var resync = false

    @Flag(help: "Print JSON.")
    var json = false

    func execute() async throws {
        let postgres = try stream.location(from)
        if resync { try removeStore(at: location.path) }
        let dataFile = (location.path as NSString).appendingPathComponent("data.mdb")
        let existed = FileManager.default.fileExists(atPath: dataFile)
        let store = try location.openOrCreate()
        var options = FollowOptions()
        options.logger = shippingLogger("eventlog.follow")
        let progress = SharedProgress()
        let report: ShipProgress
        do {
            let follower = try LogFollower(store: store.eventStore, from: postgres, stream: stream.stream, options: options)
            report = try await follower.run(once: once) { p in
                progress.update("following \(p.stream): position \(p.storeHead) of \(p.position), \(p.records) records, \(p.bytes >> 20) MiB")
            }
        } catch {
            // A follower that never got a record leaves no empty store behind.
            if !existed, (try? store.head()) == 0 {
                for name in ["data.mdb", "lock.mdb", "index"] { try? FileManager.default.removeItem(atPath: (location.path as NSString).appendingPathComponent(name)) }
            }
            throw error
        }
        progress.finish()
        try StoreLocation.waitUntilSearchable(store)
        if json {
            Output.json(shipJSON(report))
        } else {
            Output.line("followed \(report.records) records of \(report.stream); the store's head is \(report.storeHead), the stream's \(report.position), link \(report.link)")
        }
    }

    /// Deletes a store's files (data, lock, snapshots), refusing a directory
    /// that holds no store.
    private func removeStore(at path: String) throws {
        let fm = FileManager.default
        let data = (path as NSString).appendingPathComponent("data.mdb")
        guard fm.fileExists(atPath: data) else {
            if fm.fileExists(atPath: path), !((try? fm.contentsOfDirectory(atPath: path)) ?? []).isEmpty {
                throw CLIError("--resync: \(path) holds no store (no data.mdb) but is not empty; allowed: a store's directory")
            }
            return
        }
        for name in ["data.mdb", "lock.mdb", "snapshots", "index"] {
            let file = (path as NSString).appendingPathComponent(name)
            if fm.fileExists(atPath: file) { try fm.removeItem(atPath: file) }
        }
    }
}

struct RestoreCommand: AsyncSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Rebuild a store from a PostgreSQL stream alone, up to its head or a position.",
        discussion: """
            Builds a new store in DIR (which must not hold one) with the stream's records 1 … P, checked link
            by link, and the views built from them; its last link is the leader's at P (printed, and by
            `eventlog verify`).
            JSON: {"stream","epoch","streamHead","link","storeHead","records","bytes","seconds"}; storeHead
            is the restored position.

            Examples:
              eventlog restore --from postgres://app@db/events --stream shard-1 --into /var/lib/app/restored
              eventlog restore --from postgres://app@db/events --stream shard-1 --into /tmp/as-of-5000 --to 5000
            """
    )

    @OptionGroup var stream: StreamLocation

    @Option(help: ArgumentHelp("The PostgreSQL URL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…].", valueName: "url"))
    var from: String

    @Option(help: ArgumentHelp("The directory of the new store; it must not hold a store.", valueName: "dir"))
    var into: String

    @Option(help: "The last position to restore (default: the stream's head).")
    var to: UInt64?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() async throws {
        let postgres = try stream.location(from)
        if to == 0 { throw CLIError("--to 0: allowed: 1 to the stream's head") }
        if FileManager.default.fileExists(atPath: (into as NSString).appendingPathComponent("data.mdb")) {
            throw CLIError("--into \(into) already holds a store; a restore builds a new one")
        }
        let store = try StoreLocation.open(into, create: true)
        var options = FollowOptions()
        options.logger = shippingLogger("eventlog.restore")
        let progress = SharedProgress()
        let report: ShipProgress
        do {
            report = try await LogRestore.restore(into: store.eventStore, from: postgres, stream: stream.stream, through: to,
                                                  options: options) { p in
                progress.update("restoring \(p.stream): position \(p.storeHead) of \(p.position), \(p.records) records, \(p.bytes >> 20) MiB")
            }
        } catch {
            // Nothing half-built stays behind a failed restore.
            for name in ["data.mdb", "lock.mdb", "index"] { try? FileManager.default.removeItem(atPath: (into as NSString).appendingPathComponent(name)) }
            throw error
        }
        progress.finish()
        try StoreLocation.waitUntilSearchable(store)
        let link = try store.eventStore.headAndLink().link
        if json {
            Output.json(shipJSON(report, link: link))
        } else {
            Output.line("restored \(report.records) records of \(report.stream) into \(into): head \(report.storeHead), last link \(link)")
        }
    }
}
