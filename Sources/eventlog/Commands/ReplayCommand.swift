import ActivityDomain
import ArgumentParser
import EventLog
import Foundation

struct ReplayCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Rebuild the views from the log, verify them by rebuilding, or build them as of a position.",
        discussion: """
            replay                        rebuild every projection from the newest usable snapshot (or position 1
                                          with --full) and swap the result in atomically, then the index the same
                                          way (by the indexer's pipeline); the log is never written
            replay --verify               rebuild into scratch and compare with the live views, and the index with
                                          the live index at the position it applied through: prints equal, or
                                          the first differing projection and key, and exits 1
            replay --to P --into DIR      a new store in DIR with the log up to P, the views as of P and the index
                                          built through P (time travel); every read command works on it with --store DIR
            Works beside a service writing the store; reports the position it stopped at.
            JSON: {"snapshot","damagedSnapshots","position","eventsApplied","seconds",
                   "index":{"snapshot","damagedSnapshots","position","eventsApplied","seconds"}},
            with --verify also "equal" and "difference":{"projection","database","key","detail"}.

            Examples:
              eventlog replay --verify
              eventlog replay --full
              eventlog replay --to 1000 --into /tmp/as-of-1000 && eventlog saved --store /tmp/as-of-1000
            """
    )

    @OptionGroup var location: StoreLocation

    @Flag(help: "Start from position 1, ignoring snapshots.")
    var full = false

    @Flag(help: "Compare a rebuild with the live views instead of swapping it in.")
    var verify = false

    @Option(help: "Build the views as of this position (with --into).")
    var to: UInt64?

    @Option(help: ArgumentHelp("The directory of the time-travel store (with --to); it must not hold a store.", valueName: "dir"))
    var into: String?

    @Option(help: ArgumentHelp("Payload the index's rebuild reads and prepares ahead of its writer, on a second core; what is prepared stays in memory until written (about 8 bytes a byte). 0: one thread.", valueName: "MiB"))
    var readAhead = StoreOptions().indexReadAhead >> 20

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        guard (0...4096).contains(readAhead) else {
            throw ValidationError("--read-ahead is \(readAhead) MiB; it must be 0 (one thread) to 4096")
        }
        if (to == nil) != (into == nil) { throw ValidationError("--to and --into go together") }
        if into == "" { throw ValidationError("--into is empty; give the directory of the new store") }
        if verify && to != nil { throw ValidationError("--verify compares the live views; it does not take --to") }
    }

    func execute() throws {
        // --verify and --to/--into only read the live store (they build elsewhere): read-only, so
        // they neither wait for a writer nor catch its views up first. A rebuild writes.
        // A rebuild rebuilds the index too: no indexer beside it.
        let adjust = { (options: inout StoreOptions) in
            options.indexReadAhead = self.readAhead << 20
            options.indexesInBackground = false
        }
        let store = try verify || into != nil ? location.openForReading(adjusting: adjust) : location.openExisting(adjusting: adjust)
        let progress = Progress()
        defer { progress.finish() }
        if verify {
            let comparison = try store.eventStore.verifyViews(full: full, progress: replayProgress(progress))
            progress.finish()
            var members = replayJSON(comparison.report)
            members["equal"] = .bool(comparison.isEqual)
            if let difference = comparison.difference {
                members["difference"] = .object([
                    "projection": .string(difference.projection),
                    "database": .string(difference.database),
                    "key": .string(difference.keyDescription),
                    "detail": .string(difference.detail),
                ])
            }
            if json { Output.json(.object(members)) } else if comparison.isEqual {
                Output.line("equal: the views rebuilt \(replaySummary(comparison.report)) match the live ones")
            }
            if let difference = comparison.difference {
                Output.error("eventlog replay: the rebuilt views differ at position \(comparison.report.position): \(difference)")
                throw ExitCode.failure
            }
            return
        }
        let report: ReplayReport
        if let to, let into {
            let dataFile = (into as NSString).appendingPathComponent("data.mdb")
            guard !FileManager.default.fileExists(atPath: dataFile) else {
                throw CLIError("--into \(into) already holds a store; time travel builds a new one")
            }
            report = try store.eventStore.replay(through: to, into: into, full: full, progress: replayProgress(progress))
        } else {
            report = try store.eventStore.rebuild(full: full, progress: replayProgress(progress))
        }
        progress.finish()
        if json {
            Output.json(.object(replayJSON(report)))
        } else {
            Output.line((into.map { "built \($0) " } ?? "rebuilt ") + replaySummary(report))
        }
    }
}
