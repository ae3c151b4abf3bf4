import ArgumentParser
import EventLog
import Foundation
import LMDB
import SyntheticWorkload

/// Appends and reads synthetic events from its own process, so tests can kill
/// a writer mid-batch, run two writers at once, read from another process,
/// and measure raw append throughput.
@main
struct SyntheticAppender: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Append or read synthetic events (engine tests and the append benchmark).",
        subcommands: [Append.self, Read.self, Bench.self, Rebuild.self, Verify.self, VerifyViews.self, Snapshot.self,
                      HoldWrite.self, HoldReaders.self, NestedWrite.self, SetCheckpoint.self])
}

struct StoreArguments: ParsableArguments {
    @Option(help: "The store directory.") var store: String
    @Option(help: "durable, noMetaSync or noSync.") var durability: String = "durable"
    @Option(help: "The map's first size in bytes.") var mapSize: Int = 64 << 20
    @Flag(help: "Open for reading only, as eventlog's read commands do.") var readOnly = false

    func open<Views: ProjectionSet>(_ views: Views.Type = SyntheticViews.self) throws -> EventStore<Views> {
        var options = StoreOptions()
        guard let durability = Durability(rawValue: durability) else {
            throw ValidationError("--durability must be durable, noMetaSync or noSync, not \(durability)")
        }
        options.durability = durability
        options.initialMapSize = mapSize
        options.readOnly = readOnly
        return try EventStore<Views>(path: store, options: options)
    }
}

extension SyntheticAppender {
    struct Append: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Append batches; print `committed BATCH LAST` after each commit.")
        @OptionGroup var storeArguments: StoreArguments
        @Option var writer: UInt64 = 1
        @Option var batches: Int = 100
        @Option var batchSize: Int = 10
        @Option var payloadBytes: Int = 300
        @Option(help: "Stop after this many seconds, even before --batches.") var seconds: Double?

        func run() throws {
            let store = try storeArguments.open()
            let deadline = seconds.map { Date().addingTimeInterval($0) }
            // Resume this writer's sequence where its committed events end.
            var sequence = try store.read { txn in try store.views.progress.counts.get(writer, in: txn) } ?? 0
            for batch in 0..<batches {
                if let deadline, Date() >= deadline { break }
                let events = (0..<batchSize).map { i in
                    NewEvent(type: SyntheticEvent.type, schemaVersion: 1,
                             payload: SyntheticEvent.payload(writer: writer, sequence: sequence + UInt64(i), size: payloadBytes))
                }
                let receipt = try store.append(events)
                sequence += UInt64(batchSize)
                // Unbuffered, so a parent that kills us knows what committed.
                FileHandle.standardOutput.write(Data("committed \(batch) \(receipt.positions!.upperBound)\n".utf8))
            }
        }
    }

    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read the whole log repeatedly; exit 1 unless every read is a consistent prefix.")
        @OptionGroup var storeArguments: StoreArguments
        @Option var batchSize: Int = 10
        @Option var seconds: Double = 2

        func run() throws {
            let store = try storeArguments.open()
            let deadline = Date().addingTimeInterval(seconds)
            var reads = 0
            var previous: Position = 0
            repeat {
                if let problem = try ConsistentPrefix.check(store, batchSize: batchSize) {
                    print("inconsistent: \(problem)")
                    throw ExitCode(1)
                }
                // A later read never sees fewer records than an earlier one.
                let head = try store.head()
                if head < previous {
                    print("inconsistent: head \(head) after \(previous)")
                    throw ExitCode(1)
                }
                previous = head
                reads += 1
            } while Date() < deadline
            print("consistent reads: \(reads)")
        }
    }

    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Append COUNT events in batches and print events/s as JSON.",
            discussion: "Without --with-projection no projection runs: the engine's own cost, comparable with raw LMDB.")
        @OptionGroup var storeArguments: StoreArguments
        @Option var batchSize: Int = 500
        @Option var count: Int = 100_000
        @Option var payloadBytes: Int = 300
        @Flag(help: "Apply the writer-progress projection to each event.") var withProjection = false

        func run() throws {
            if withProjection { try measure(storeArguments.open(SyntheticViews.self)) } else { try measure(storeArguments.open(NoViews.self)) }
        }

        func measure<Views>(_ store: EventStore<Views>) throws {
            let payload = SyntheticEvent.payload(writer: 1, sequence: 0, size: payloadBytes)
            let batch = [NewEvent](repeating: NewEvent(type: SyntheticEvent.type, schemaVersion: 1, payload: payload),
                                   count: batchSize)
            let start = DispatchTime.now().uptimeNanoseconds
            var written = 0
            while written < count {
                let n = min(batchSize, count - written)
                try store.append(n == batchSize ? batch : Array(batch.prefix(n)))
                written += n
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            print("{\"batchSize\":\(batchSize),\"count\":\(count),\"durability\":\"\(storeArguments.durability)\",\"seconds\":\(seconds),\"eventsPerSecond\":\(Double(count) / seconds)}")
        }
    }
}

extension SyntheticAppender {
    struct Rebuild: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rebuild every projection from position 1 (to be killed midway by a test).")
        @OptionGroup var storeArguments: StoreArguments

        func run() throws {
            let store = try storeArguments.open()
            let report = try store.rebuild(full: true) { progress in
                FileHandle.standardOutput.write(Data("\(progress.phase.rawValue) \(progress.position)\n".utf8))
            }
            print("rebuilt \(report.position)")
        }
    }
}


extension SyntheticAppender {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Verify the log repeatedly; exit 1 at the first problem.")
        @OptionGroup var storeArguments: StoreArguments
        @Option var seconds: Double = 2

        func run() throws {
            let store = try storeArguments.open()
            let deadline = Date().addingTimeInterval(seconds)
            var runs = 0
            repeat {
                let report = try store.verify()
                if let problem = report.firstProblem {
                    print("invalid: \(problem)")
                    throw ExitCode(1)
                }
                runs += 1
            } while Date() < deadline
            print("verified: \(runs)")
        }
    }

    struct VerifyViews: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-views",
            abstract: "Rebuild the views in scratch and compare them with the live ones (replay --verify), repeatedly; exit 1 at a difference.")
        @OptionGroup var storeArguments: StoreArguments
        @Option var seconds: Double = 2

        func run() throws {
            let store = try storeArguments.open()
            let deadline = Date().addingTimeInterval(seconds)
            var runs = 0
            repeat {
                let comparison = try store.verifyViews()
                if let difference = comparison.difference {
                    print("different: \(difference)")
                    throw ExitCode(1)
                }
                runs += 1
            } while Date() < deadline
            print("equal: \(runs)")
        }
    }

    struct Snapshot: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a snapshot and check its digest, repeatedly, keeping the newest two; exit 1 on a damaged one.")
        @OptionGroup var storeArguments: StoreArguments
        @Option var seconds: Double = 2

        func run() throws {
            let store = try storeArguments.open()
            let deadline = Date().addingTimeInterval(seconds)
            var runs = 0
            repeat {
                let snapshot = try store.createSnapshot()
                if !store.verifySnapshot(snapshot) {
                    print("damaged: \(snapshot.path)")
                    throw ExitCode(1)
                }
                for old in try store.snapshots().dropLast(2) { try store.deleteSnapshot(at: old.position) }
                runs += 1
            } while Date() < deadline
            print("snapshots: \(runs)")
        }
    }
}
