import ArgumentParser
import Foundation
import IndexingWorkload

/// Times free-text queries over an existing store, the way `eventlog bench`
/// times them after indexing (`IndexingRun.measure`: each query once to warm,
/// then each timed once), `--rounds` times in one process. Prints one JSON
/// `QueryLatency` a round. Hidden: a tool for tuning the query path, where a
/// fresh store a run would cost an indexing run each time. Under callgrind,
/// the instructions of 2 rounds minus those of 1 are two warm passes, without
/// the process's one-time costs (Swift metadata, first page faults).
///
/// ```
/// eventlog bench-queries --store DIR --queries queries.txt --rounds 3
/// eventlog bench-queries --store DIR --queries queries.txt --users 300
/// ```
struct BenchQueriesCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-queries",
        abstract: "Time free-text queries over an existing store (internal).",
        shouldDisplay: false
    )

    @OptionGroup var location: StoreLocation

    @Option(help: ArgumentHelp("One query a line.", valueName: "file"))
    var queries: String

    @Option(help: "How many times to warm and time every query.")
    var rounds = 1

    @Option(help: "The time expiry is judged at (ISO-8601; default: the clock).")
    var now: String?

    @Option(help: "Query k runs as user u{k mod N} (a store made by `bench --users N`); default: the default space.")
    var users: Int?

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be 1 or more") }
        if let users, users < 1 { throw ValidationError("--users \(users): allowed: 1 or more") }
    }

    func execute() throws {
        let now = try parseTime(self.now, option: "--now")
        let store = try location.openForReading()
        let list = try QueryWorkload.read(path: queries)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for _ in 0..<rounds {
            let latency = try IndexingRun.measure(list, on: store, now: now, users: users.map(UserSpread.init(count:)))
            Output.line(String(decoding: try encoder.encode(latency), as: UTF8.self))
        }
    }
}
