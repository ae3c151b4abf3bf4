import ActivityDomain
import ArgumentParser
import EventLog

struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Create, list or delete snapshots of the views and of the index.",
        discussion: """
            A snapshot holds every projection's state at one position, the link of the log's record there
            (the history it was built from), their versions and a digest; it is taken from a read transaction
            without stopping writers. `create` writes one of the views and one of the index (as of the position
            the index applied through). `list` shows both kinds, each with its digest and its history: a rebuild
            uses only those this log vouches for. Files: <store>/snapshots/.

            Examples:
              eventlog snapshot create
              eventlog snapshot list --json
              eventlog snapshot delete 120000
            """,
        subcommands: [Create.self, List.self, Delete.self]
    )

    /// `{"kind","position","link","path","bytes","projections":[{"name","version"}]}` (plus
    /// `valid` and `history` from `list` and `verify`).
    static func json(_ snapshot: SnapshotInfo, valid: Bool? = nil, history: DerivedHistory? = nil) -> JSONValue {
        var members: [String: JSONValue] = [
            "kind": .string(snapshot.kind == .index ? "index" : "views"),
            "position": .integer(Int64(snapshot.position)),
            "path": .string(snapshot.path),
            "bytes": .integer(Int64(snapshot.bytes)),
            "projections": .array(snapshot.projections.map {
                .object(["name": .string($0.name), "version": .integer(Int64($0.version))])
            }),
        ]
        if let link = snapshot.link { members["link"] = .string("\(link)") }
        if let valid { members["valid"] = .bool(valid) }
        if let history { members["history"] = VerifyCommand.json(history) }
        return .object(members)
    }

    /// Every snapshot of `store`, the views' and the index's, by position
    /// (the views' first at one position), each with its digest checked and
    /// its history (whether this log vouches for it).
    static func checked(_ store: EventStore<ActivityViews>) throws -> [(snapshot: SnapshotInfo, valid: Bool, history: DerivedHistory)] {
        let all = (try store.snapshots(of: .views) + store.snapshots(of: .index))
            .sorted { ($0.position, $0.kind == .index ? 1 : 0) < ($1.position, $1.kind == .index ? 1 : 0) }
        return try all.map { ($0, store.verifySnapshot($0), try store.history(of: $0)) }
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
            commandName: "list", abstract: "The snapshots of the views and of the index, oldest first, each with its digest and history checked.",
            discussion: "JSON: [{\"kind\",\"position\",\"link\",\"path\",\"bytes\",\"projections\",\"valid\",\"history\"}].")

        @OptionGroup var location: StoreLocation

        @Flag(help: "Print JSON.")
        var json = false

        func execute() throws {
            let store = try location.openForReading()
            let checked = try SnapshotCommand.checked(store.eventStore)
            if json {
                Output.jsonArray(checked.map { SnapshotCommand.json($0.snapshot, valid: $0.valid, history: $0.history) })
            } else {
                Output.table(["POSITION", "KIND", "BYTES", "DIGEST", "HISTORY", "PROJECTIONS"], checked.map { snapshot, valid, history in
                    [String(snapshot.position), snapshot.kind == .index ? "index" : "views", String(snapshot.bytes), valid ? "ok" : "DAMAGED",
                     history.isThisLog ? "this log's" : history.name,
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

        @Flag(help: "Delete the index's snapshot at that position (default: the views').")
        var index = false

        func execute() throws {
            // Only the file goes: a read-only open, so that a store whose writers refuse it
            // (a snapshot ahead of the log) can be rid of the snapshot.
            let store = try location.openForReading()
            let kind = index ? "index snapshot" : "snapshot"
            guard try store.eventStore.deleteSnapshot(at: position, index ? .index : .views) else {
                throw CLIError("snapshot delete: no \(kind) at position \(position); `eventlog snapshot list` shows them")
            }
            Output.line("deleted the \(kind) at position \(position)")
        }
    }
}
