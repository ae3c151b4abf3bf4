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
        subcommands: [Append.self, Read.self, Bench.self, Rebuild.self, HoldWrite.self, HoldReaders.self, NestedWrite.self, SetCheckpoint.self])
}

struct StoreArguments: ParsableArguments {
    @Option(help: "The store directory.") var store: String
    @Option(help: "durable, noMetaSync or noSync.") var durability: String = "durable"
    @Option(help: "The map's first size in bytes.") var mapSize: Int = 64 << 20

    func open<Views: ProjectionSet>(_ views: Views.Type = SyntheticViews.self) throws -> EventStore<Views> {
        var options = StoreOptions()
        guard let durability = Durability(rawValue: durability) else {
            throw ValidationError("--durability must be durable, noMetaSync or noSync, not \(durability)")
        }
        options.durability = durability
        options.initialMapSize = mapSize
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

        func run() throws {
            let store = try storeArguments.open()
            // Resume this writer's sequence where its committed events end.
            var sequence = try store.read { txn in try store.views.progress.counts.get(writer, in: txn) } ?? 0
            for batch in 0..<batches {
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
            repeat {
                if let problem = try ConsistentPrefix.check(store, batchSize: batchSize) {
                    print("inconsistent: \(problem)")
                    throw ExitCode(1)
                }
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

