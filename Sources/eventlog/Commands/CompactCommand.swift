import ActivityDomain
import ArgumentParser
import EventLog
import Foundation

struct CompactCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Rewrite the store's files without LMDB's free pages (after forget: no byte of the user's data left in them).",
        discussion: """
            Writes LMDB's compacting copy of data.mdb beside it (data.mdb.compacting), zeroes the stale bytes
            it carries (overflow pages' tails, pages' free space), syncs it, checks it
            (same head, link and databases), and renames it over data.mdb: a crash at any point leaves the
            old file or the new one, whole. Every process must have closed the store, readers too (a
            service, a follower, other eventlog commands): otherwise it is refused, and while it runs,
            opening the store is refused. It needs free disk space for the copy (about the data in use).
            Also removes what killed processes left: a compaction's copy, rebuild scratch environments,
            partial snapshots, and any snapshot from before a forget that a process killed mid-way left behind.
            Then the same for the index environment's file (index/data.mdb); an index that has not applied
            every forget (its indexer cut off) is first brought past them, or compact refuses, saying why:
            no byte of a forgotten user is left in either file.
            JSON: {"store","head","bytesBefore","bytesAfter","bytesZeroed","removed":[NAME],"seconds",
                   "records":{"recordsRewritten","storedBytesBefore","storedBytesAfter","dictionary","dictionariesRemoved"},
                   "index":{"bytesBefore","bytesAfter","bytesZeroed"}} ("index" omitted when the store has none;
            bytesZeroed: stale bytes LMDB's copy carries in overflow pages' tails and pages' free space, zeroed before the swap).

            Examples:
              eventlog compact --store /var/lib/app/events
              eventlog compact --json
            """
    )

    @OptionGroup var location: StoreLocation

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let environment = ProcessInfo.processInfo.environment
        let display = CompactionDisplay(killAt: environment[CompactionDisplay.killVariable],
                                        stopAt: environment[CompactionDisplay.stopVariable])
        let result = try ActivityStore.compact(path: location.path, progress: { display.show($0) })
        display.finish()
        if json {
            var members: [String: JSONValue] = [
                "store": .string(result.path),
                "head": .integer(Int64(result.head)),
                "bytesBefore": .integer(Int64(result.bytesBefore)),
                "bytesAfter": .integer(Int64(result.bytesAfter)),
                "bytesZeroed": .integer(Int64(result.bytesZeroed)),
                "removed": .array(result.removed.map { .string($0) }),
                "seconds": .double(result.seconds),
            ]
            var records: [String: JSONValue] = [
                "recordsRewritten": .integer(Int64(result.records.recordsRewritten)),
                "storedBytesBefore": .integer(Int64(result.records.storedBytesBefore)),
                "storedBytesAfter": .integer(Int64(result.records.storedBytesAfter)),
                "dictionariesRemoved": .array(result.records.dictionariesRemoved.map { .integer(Int64($0)) }),
            ]
            if let dictionary = result.records.dictionary { records["dictionary"] = .integer(Int64(dictionary)) }
            members["records"] = .object(records)
            if let index = result.index {
                members["index"] = .object([
                    "bytesBefore": .integer(Int64(index.bytesBefore)),
                    "bytesAfter": .integer(Int64(index.bytesAfter)),
                    "bytesZeroed": .integer(Int64(index.bytesZeroed)),
                ])
            }
            Output.json(.object(members))
        } else {
            let saved = result.bytesBefore > 0 ? 100 * Double(result.bytesBefore - result.bytesAfter) / Double(result.bytesBefore) : 0
            Output.line("compacted \(result.path): data.mdb \(result.bytesBefore) -> \(result.bytesAfter) bytes "
                + String(format: "(%.1f %% smaller)", saved) + ", head \(result.head), "
                + String(format: "%.2f s", result.seconds)
                + (result.bytesZeroed > 0 ? "; \(result.bytesZeroed) stale bytes zeroed" : ""))
            if result.records.recordsRewritten > 0 {
                Output.line("rewrote \(result.records.recordsRewritten) records compact: \(result.records.storedBytesBefore) -> "
                    + "\(result.records.storedBytesAfter) stored bytes"
                    + (result.records.dictionary.map { ", dictionary \($0)" } ?? ", no dictionary"))
            }
            if let index = result.index {
                Output.line("compacted its index: index/data.mdb \(index.bytesBefore) -> \(index.bytesAfter) bytes"
                    + (index.bytesZeroed > 0 ? "; \(index.bytesZeroed) stale bytes zeroed" : ""))
            }
            if !result.removed.isEmpty {
                Output.line("removed what killed processes left: \(result.removed.joined(separator: ", "))")
            }
        }
    }
}

/// The compaction's progress on a terminal (`Progress`: quiet when stderr
/// is not one), fed from the library's thread and the copy's watcher.
///
/// Test hooks, so that the crash tests reach every step
/// (`Tests/EventLogCLITests/CompactionTests.swift`): with
/// `EVENTLOG_COMPACT_KILL_AT=STEP` (a `CompactionStep`, e.g. `swapped`) in
/// the environment, the process kills itself with SIGKILL when the
/// compaction first reports that step; with `EVENTLOG_COMPACT_STOP_AT=STEP`
/// it stops itself there (SIGSTOP) until a SIGCONT.
final class CompactionDisplay: @unchecked Sendable {
    static let killVariable = "EVENTLOG_COMPACT_KILL_AT"
    static let stopVariable = "EVENTLOG_COMPACT_STOP_AT"
    private let lock = NSLock()
    private let progress = Progress()
    private let killAt: CompactionStep?
    private var stopAt: CompactionStep?

    init(killAt: String?, stopAt: String?) {
        self.killAt = killAt.flatMap(CompactionStep.init(rawValue:))
        self.stopAt = stopAt.flatMap(CompactionStep.init(rawValue:))
    }

    func show(_ report: CompactionProgress) {
        lock.lock()
        defer { lock.unlock() }
        if report.step == killAt { kill(getpid(), SIGKILL) }
        if report.step == stopAt {
            stopAt = nil
            kill(getpid(), SIGSTOP)
        }
        progress.update("compacting: \(report.step.rawValue), \(report.bytesWritten >> 20) MiB of at most \(report.bytesExpected >> 20) MiB")
    }

    func finish() {
        lock.lock()
        defer { lock.unlock() }
        progress.finish()
    }
}
