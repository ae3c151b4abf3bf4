import ActivityDomain
import ArgumentParser
import EventLog
import LMDB

struct LogCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Print the log's events in order.",
        discussion: """
            With --json, JSON Lines (one event a line, so a long log streams):
            {"position","type","version","at","event"}, event being the decoded payload.
            The log is the store's, every user's events in one order; --user keeps one user's
            (and not the store-wide ones).

            Examples:
              eventlog log --limit 20
              eventlog log --user alice --json
              eventlog log --from 1000 --json | jq .type
            """
    )

    @OptionGroup var location: StoreLocation

    @Option(help: "The first position to print.")
    var from: UInt64 = 1

    @Option(help: "At most this many events.")
    var limit: Int?

    @Option(help: ArgumentHelp("Only the events of this user space (\"\" for the default space).", valueName: "user"))
    var user: String?

    @Flag(help: "JSON Lines: {\"position\",\"type\",\"version\",\"at\",\"event\"}.")
    var json = false

    func validate() throws {
        guard from >= 1 else { throw ValidationError("--from must be a position, 1 or more") }
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
    }

    func execute() throws {
        if let user { try ActivityRules.checkUser(user, operation: "--user") }
        let store = try location.openForReading()
        var printed = 0
        let limit = self.limit ?? .max
        guard limit > 0 else { return }
        try store.eventStore.forEachEvent(from: from) { event in
            // By bytes: a user canonically equal to another is another user.
            if let user {
                guard let owner = try ActivityEventCatalog.user(of: event), Name.equal(owner, user) else { return true }
            }
            if json {
                Output.json(try ViewJSON.event(event))
            } else {
                Output.line("\(event.position)  \(Output.time(event.appendedAt))  \(event.type) v\(event.schemaVersion)"
                    + (event.isRedacted ? "  (redacted)" : "  \(event.payload.count) bytes"))
            }
            printed += 1
            return printed < limit
        }
    }
}
