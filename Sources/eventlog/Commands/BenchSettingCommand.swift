import ArgumentParser
import EventLog
import Foundation
import IndexingWorkload
import LMDB

/// One setting of `eventlog bench`, run by `bench` in a process of its own
/// so that the peak resident memory it reports belongs to that setting
/// alone (VmHWM never goes down within a process). Prints one JSON
/// `IndexingResult`. Hidden: an interface between `bench` and itself.
struct BenchSettingCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-setting",
        abstract: "Run one setting of `eventlog bench` (internal).",
        shouldDisplay: false
    )

    @Option(help: ArgumentHelp("A directory that holds no store yet.", valueName: "dir"))
    var store: String

    @Option(name: .customLong("batch-size"))
    var batchSize: Int

    @Option(help: "durable, noMetaSync or noSync.")
    var durability: String = Durability.durable.rawValue

    @Option
    var writers: Int = 1

    @Option
    var pipeline: Int = 0

    @Option
    var users: Int?

    @Option(help: ArgumentHelp(valueName: "file"))
    var corpus: String?

    @Option(help: "Generated items; with --corpus, its first N items.")
    var items: Int?

    @Option
    var seed: UInt64 = 1

    @Option(name: .customLong("item-limit"))
    var itemLimit: Int?

    @Option(help: ArgumentHelp(valueName: "file"))
    var queries: String?

    @Flag(name: .customLong("report-progress"))
    var reportProgress = false

    @Flag(name: .customLong("alternate-raw"))
    var alternateRaw = false

    func execute() throws {
        let dataFile = (store as NSString).appendingPathComponent("data.mdb")
        guard !FileManager.default.fileExists(atPath: dataFile) else {
            throw CLIError("--store \(store) already holds a store; a setting indexes into a fresh one")
        }
        let source: ItemSource = corpus.map { .corpus(path: $0, limit: items) }
            ?? .generated(count: items ?? BenchCommand.defaultItems, seed: seed)
        guard let durability = Durability(rawValue: durability) else {
            throw CLIError("--durability \(self.durability): allowed: \(Durability.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var progress: (@Sendable (Int) -> Void)?
        if reportProgress {
            let reporter = ChildProgress()
            progress = { reporter.report($0) }
        }
        let queryList = try queries.map { try QueryWorkload.read(path: $0) } ?? []
        let result = try IndexingRun.run(
            IndexingSetting(batchSize: batchSize, durability: durability, writers: writers, pipeline: pipeline, users: users,
                            alternatesRaw: alternateRaw),
            source: source, storePath: store, queries: queryList, itemLimit: itemLimit, progress: progress)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        Output.line(String(decoding: try encoder.encode(result), as: UTF8.self))
    }
}
