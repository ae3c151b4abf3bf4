import ArgumentParser
import EventLog
import Foundation
import IndexingWorkload
import LMDB

struct BenchCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Index a corpus at several batch sizes and durabilities, each into a fresh store; recommend a batch size.",
        discussion: """
            For each durability, writer count and batch size: a fresh temporary store, indexed in a process of
            its own (so its peak memory is its own), then a full replay verified against the live views, then
            the --queries. Items/s counts indexing only: reading and parsing the input is not timed.
            Small batch sizes are capped at --max-commits commits (batch size × commits items), marked * .
            The recommendation: the smallest batch size within 10% of the best items/s, with its commit latency.
            With --pipeline N (default \(BenchCommand.defaultPipeline)), each writer hands over up to N batches before the first is
            durable, and a batch's items are tokenized on another core while the one before commits; commit
            latency is then from hand-over to durable. --pipeline 0: each batch waits for its own commit.
            With --users N, item i belongs to user u{i mod N} (u000, u001, …; as peer_bench.py --users N): each
            item is an operation of its own in its user's space, a batch's operations share one transaction, and
            query k runs as user u{k mod N}.
            JSON: {"settings":[{"setting":{"batchSize","durability","writers","pipeline","users"},"items","capped","seconds",
                   "itemsPerSecond","megabytesPerSecond","commits","transactions","commitLatency":{"p50","p99","max"} (ms),
                   "rawLMDB":{"commitsPerSecond","engineRatio"} (with --alternate-raw),
                   "peakResidentBytes" (VmHWM, mapped store pages included),"peakAnonymousBytes" (RssAnon),
                   "indexingPeakAnonymousBytes" (RssAnon until indexing ends),"bytesOnDisk","replaySeconds","replayEventsPerSecond","replayItemsPerSecond",
                   "replayCPUSeconds","replayCores" (CPU time, every thread, over wall time),
                   "replayVerified","queries":{"count","withHits","p50Microseconds","p99Microseconds","maxMicroseconds"}}],
                   "recommendation":{"batchSize","durability","writers","itemsPerSecond","bestItemsPerSecond",
                   "commitP50","commitP99"},"recommendations":[…],"source","maxCommits"}.
            CSV: one row per setting, with a header.

            Examples:
              eventlog bench
              eventlog bench --corpus ../shared/corpus/items.jsonl.gz --batch-sizes 1,100,500,5000 \\
                  --queries ../shared/corpus/queries.txt
              eventlog bench --batch-sizes 10 --writers 1,4          # what group commit gives
              eventlog bench --corpus ../shared/corpus/items.jsonl.gz --batch-sizes 500 --users 300 \\
                  --queries ../shared/corpus/queries.txt             # 300 users' items, one operation each
              eventlog bench --batch-sizes 1 --pipeline 0 --max-commits 5000 --alternate-raw   # against raw LMDB's commit
              eventlog bench --durability durable,noSync --csv > bench.csv
              eventlog bench --batch-sizes 1,10,100,1000 --durability durable,noSync --plot sweep.svg
            """
    )

    static let defaultItems = 20_000

    @Option(help: ArgumentHelp("Items as JSON Lines (.gz accepted); default: generated items.", valueName: "file"))
    var corpus: String?

    @Option(help: ArgumentHelp("Generated items (default 20,000); with --corpus, its first N items (default all).",
                               valueName: "n"))
    var items: Int?

    @Option(help: "The generator's seed: the same seed, the same items.")
    var seed: UInt64 = 1

    @Option(name: .customLong("batch-sizes"), help: ArgumentHelp("Items per commit, comma-separated.", valueName: "list"),
            transform: BenchCommand.positiveList)
    var batchSizes: [Int] = [1, 10, 100, 500, 1000, 5000]

    @Option(help: ArgumentHelp("durable, noMetaSync, noSync; comma-separated.", valueName: "list"),
            transform: BenchCommand.durabilities)
    var durability: [Durability] = [.durable]

    @Option(help: ArgumentHelp("Threads indexing at once (group commit); a number or a comma-separated list.",
                               valueName: "n"),
            transform: BenchCommand.positiveList)
    var writers: [Int] = [1]

    @Option(help: ArgumentHelp("Batches each writer hands over before the first is durable, so that the next is tokenized "
                               + "while one commits (a CommandPipeline of this depth); 0: each batch waits for its commit.",
                               valueName: "n"))
    var pipeline = BenchCommand.defaultPipeline

    static let defaultPipeline = 2

    @Option(help: ArgumentHelp("Spread the items over N users: item i belongs to u{i mod N}, one operation an item.",
                               valueName: "n"))
    var users: Int?

    @Option(name: .customLong("max-commits"), help: ArgumentHelp("Commits per setting at most.", valueName: "n"))
    var maxCommits = 20_000

    @Flag(name: .customLong("alternate-raw"),
          help: ArgumentHelp("After each commit, one commit of raw LMDB (a 300-byte MDB_APPEND record, the same durability) in an "
                             + "environment beside the store; report its rate and the engine's ratio to it, the disk's changing load "
                             + "falling on both alike. With --writers 1 --pipeline 0 only; items/s then include the raw commits."))
    var alternateRaw = false

    @Option(help: ArgumentHelp("Free-text queries, one a line, timed over each indexed store.", valueName: "file"))
    var queries: String?

    @Option(name: .customLong("work-dir"),
            help: ArgumentHelp("Where the temporary stores go: the disk measured (default: the temporary directory).",
                               valueName: "dir"))
    var workDir: String?

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(help: "Print CSV, one row per setting.")
    var csv = false

    @Option(help: ArgumentHelp("Also draw the sweep as an SVG chart: items/s and commit latency p50/p99 against batch size, a series per durability and writer count.",
                               valueName: "file.svg"))
    var plot: String?

    func validate() throws {
        if json && csv { throw ValidationError("--json and --csv exclude each other") }
        if let items, items < 1 { throw ValidationError("--items \(items): allowed: 1 or more") }
        if maxCommits < 1 { throw ValidationError("--max-commits \(maxCommits): allowed: 1 or more") }
        if pipeline < 0 || pipeline > 64 { throw ValidationError("--pipeline \(pipeline): allowed: 0 to 64") }
        if let users, users < 1 { throw ValidationError("--users \(users): allowed: 1 or more") }
        if alternateRaw && (pipeline != 0 || writers != [1]) {
            throw ValidationError("--alternate-raw: allowed with --writers 1 --pipeline 0 only (a raw commit follows each of the engine's)")
        }
    }

    func execute() throws {
        if let corpus, !FileManager.default.fileExists(atPath: corpus) {
            throw CLIError("--corpus \(corpus) does not exist")
        }
        if let queries, !FileManager.default.isReadableFile(atPath: queries) {
            throw CLIError("--queries \(queries) cannot be read")
        }
        let base = (workDir ?? FileManager.default.temporaryDirectory.path) as NSString
        let settings = durability.flatMap { d in
            writers.flatMap { w in
                batchSizes.map {
                    IndexingSetting(batchSize: $0, durability: d, writers: w, pipeline: pipeline, users: users, alternatesRaw: alternateRaw)
                }
            }
        }
        let progress = Progress()
        defer { progress.finish() }
        var results: [IndexingResult] = []
        for (index, setting) in settings.enumerated() {
            let scratch = base.appendingPathComponent("eventlog-bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let limit = setting.batchSize.multipliedReportingOverflow(by: maxCommits)
            var arguments = [
                "--store", (scratch as NSString).appendingPathComponent("store"),
                "--batch-size", "\(setting.batchSize)", "--durability", setting.durability.rawValue,
                "--writers", "\(setting.writers)", "--pipeline", "\(setting.pipeline)", "--seed", "\(seed)",
            ]
            if !limit.overflow { arguments += ["--item-limit", "\(limit.partialValue)"] }
            if let corpus { arguments += ["--corpus", corpus] }
            if let items { arguments += ["--items", "\(items)"] }
            if let queries { arguments += ["--queries", queries] }
            if let users { arguments += ["--users", "\(users)"] }
            if alternateRaw { arguments.append("--alternate-raw") }
            let label = "batch \(setting.batchSize) \(setting.durability.rawValue)"
                + (setting.writers > 1 ? " ×\(setting.writers) writers" : "") + " (\(index + 1) of \(settings.count))"
            progress.update("\(label): starting")
            let started = ContinuousClock.now
            do {
                let result = try SettingProcess.run(arguments, scratch: scratch) { indexed in
                    let seconds = (ContinuousClock.now - started).secondsValue
                    progress.update("\(label): \(grouped(indexed)) items, "
                        + String(format: "%.0f items/s", Double(indexed) / max(seconds, 0.001)))
                }
                results.append(result)
            } catch {
                throw CLIError("\(label): \(error)")
            }
        }
        progress.finish()
        let report = BenchReport(settings: results, source: corpus ?? "generated", maxCommits: maxCommits)
        if let plot {
            do {
                try BenchPlot(results).svg.write(toFile: plot, atomically: true, encoding: .utf8)
            } catch {
                throw CLIError("--plot \(plot): \(error.localizedDescription)")
            }
        }
        if json {
            try report.printJSON()
        } else if csv {
            report.printCSV()
        } else {
            report.printTable()
        }
        if results.contains(where: { !$0.replayVerified }) {
            Output.error("eventlog bench: a replay did not rebuild the views equal to the live ones")
            throw ExitCode.failure
        }
    }

    static func positiveList(_ text: String) throws -> [Int] {
        let values = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else {
            throw ValidationError("\"\(text)\": allowed: positive integers separated by commas, e.g. 1,100,500")
        }
        return values.map { $0! }
    }

    static func durabilities(_ text: String) throws -> [Durability] {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let values = names.map(Durability.init(rawValue:))
        guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else {
            throw ValidationError("\"\(text)\": allowed: \(Durability.allCases.map(\.rawValue).joined(separator: ", ")), comma-separated")
        }
        return values.map { $0! }
    }
}

extension Duration {
    /// The duration as floating-point seconds.
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
