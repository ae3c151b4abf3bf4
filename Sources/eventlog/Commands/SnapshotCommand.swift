import ActivityDomain
import ArgumentParser
import EventLog

struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Create, list or delete snapshots of the views.",
        discussion: """
            A snapshot holds every projection's state at one position, their versions and a digest;
            it is taken from a read transaction without stopping writers. Files: <store>/snapshots/.

            Examples:
              eventlog snapshot create
              eventlog snapshot list --json
              eventlog snapshot delete 120000
            """,
        subcommands: [Create.self, List.self, Delete.self]
    )

    /// `{"position","path","bytes","projections":[{"name","version"}]}` (plus `valid` from `list`).
    static func json(_ snapshot: SnapshotInfo, valid: Bool? = nil) -> JSONValue {
        var members: [String: JSONValue] = [
            "position": .integer(Int64(snapshot.position)),
            "path": .string(snapshot.path),
            "bytes": .integer(Int64(snapshot.bytes)),
            "projections": .array(snapshot.projections.map {
                .object(["name": .string($0.name), "version": .integer(Int64($0.version))])
            }),
        ]
        if let valid { members["valid"] = .bool(valid) }
        return .object(members)
    }

    struct Create: Subcommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Snapshot the views as of the last commit.")

        @OptionGroup var location: StoreLocation

        @Flag(help: "Print JSON.")
        var json = false

        func execute() throws {
            let store = try location.openExisting()
            let snapshot = try store.eventStore.createSnapshot()
            if json {
                Output.json(SnapshotCommand.json(snapshot))
            } else {
                Output.line("snapshot at position \(snapshot.position): \(snapshot.path) (\(snapshot.bytes) bytes)")
            }
        }
    }

    struct List: Subcommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "The snapshots, oldest first, each with its digest checked.")

        @OptionGroup var location: StoreLocation

        @Flag(help: "Print JSON.")
        var json = false

        func execute() throws {
            let store = try location.openForReading()
            let snapshots = try store.eventStore.snapshots()
            let checked = snapshots.map { ($0, store.eventStore.verifySnapshot($0)) }
            if json {
                Output.jsonArray(checked.map { SnapshotCommand.json($0.0, valid: $0.1) })
            } else {
                Output.table(["POSITION", "BYTES", "DIGEST", "PROJECTIONS"], checked.map { snapshot, valid in
                    [String(snapshot.position), String(snapshot.bytes), valid ? "ok" : "DAMAGED",
                     snapshot.projections.map { "\($0.name) v\($0.version)" }.joined(separator: ", ")]
                })
            }
        }
    }

    struct Delete: Subcommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete the snapshot at a position.")

        @OptionGroup var location: StoreLocation

        @Argument(help: "The snapshot's position.")
        var position: UInt64

        func execute() throws {
            let store = try location.openExisting()
            guard try store.eventStore.deleteSnapshot(at: position) else {
                throw CLIError("snapshot delete: no snapshot at position \(position); `eventlog snapshot list` shows them")
            }
            Output.line("deleted the snapshot at position \(position)")
        }
    }
}
