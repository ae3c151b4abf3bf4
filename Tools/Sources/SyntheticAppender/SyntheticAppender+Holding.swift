import ArgumentParser
import EventLog
import Foundation
import LMDB
import SyntheticWorkload

/// Subcommands that hold a store's resources for other processes' tests:
/// the writer lock, reader slots, and a nested write that must trap.
extension SyntheticAppender {
    struct HoldWrite: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hold-write",
            abstract: "Hold the store's write transaction (LMDB's writer lock) for SECONDS; print `holding` once it is held.")
        @Option(help: "The store directory.") var store: String
        @Option var seconds: Double = 20

        func run() throws {
            let environment = try Environment(path: store)
            try environment.write { _ in
                FileHandle.standardOutput.write(Data("holding\n".utf8))
                Thread.sleep(forTimeInterval: seconds)
            }
            FileHandle.standardOutput.write(Data("released\n".utf8))
        }
    }

    struct HoldReaders: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hold-readers",
            abstract: "Open COUNT read transactions at once and hold them for SECONDS; print `holding N` (N opened) once they are open.")
        @Option(help: "The store directory.") var store: String
        @Option var count: Int = 1024
        @Option var seconds: Double = 60
        @Flag(help: "Open the environment read-only (MDB_RDONLY), as a read command does.") var readOnly = false

        func run() throws {
            var options = EnvironmentOptions()
            options.readOnly = readOnly
            let environment = try Environment(path: store, options: options)
            try hold(count, in: environment)
        }

        /// One read transaction per level of recursion, all open at the innermost.
        private func hold(_ remaining: Int, in environment: Environment) throws {
            if remaining == 0 {
                FileHandle.standardOutput.write(Data("holding \(count)\n".utf8))
                Thread.sleep(forTimeInterval: seconds)
                return
            }
            try environment.read { _ in try hold(remaining - 1, in: environment) }
        }
    }

    struct NestedWrite: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "nested-write",
            abstract: "Write inside a write on the same thread: must trap with a message, not hang.")
        @OptionGroup var storeArguments: StoreArguments
        @Option(help: "store (EventStore.write) or environment (Environment.write).") var layer = "store"

        func run() throws {
            let store = try storeArguments.open()
            let event = NewEvent(type: SyntheticEvent.type, schemaVersion: 1, payload: SyntheticEvent.payload(writer: 1, sequence: 0, size: 10))
            if layer == "environment" {
                try store.environment.write { _ in try store.environment.write { _ in } }
            } else {
                try store.write { _ in try store.append([event]) }
            }
            print("returned")
        }
    }
}

extension SyntheticAppender {
    struct SetCheckpoint: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-checkpoint",
            abstract: "Overwrite a projection's checkpoint in meta, behind the engine's back: makes a view lag, or look built by another version.")
        @Option(help: "The store directory.") var store: String
        @Option var projection: String
        @Option var position: UInt64
        @Option var version: UInt32

        func run() throws {
            let environment = try Environment(path: store)
            try environment.write { txn in
                let meta: Database<String, Checkpoint> = try txn.openDatabase("meta")
                try meta.put(Checkpoint(position: position, version: version), forKey: "checkpoint:" + projection, in: txn)
            }
        }
    }
}
