import ActivityDomain
import ArgumentParser
import TextIndex

struct SearchCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Free-text search over searchable items and saved activities.",
        discussion: """
            Every word must match; the last also as a prefix. Ranked by BM25F, ties by identifier;
            expired documents left out. JSON: [{"kind","identifier","score"}], by score then identifier.

            The keyword index follows the log: a write is searchable shortly after it returns. With --after P
            (a position a write printed) the read first waits, up to --wait seconds, until the index has
            applied the log through P, else fails saying how far behind it is; without it, it answers from
            the index as it is, and a note on stderr says when that lags the log.

            Example:
              eventlog search "oat lat" --limit 5 --json
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var userOption: UserOption
    @OptionGroup var position: IndexWaitOption

    @Argument(help: "The words to find.")
    var text: String

    @Option(help: "The time expiry is judged at (ISO-8601; default: the clock).")
    var now: String?

    @Option(help: "At most this many hits.")
    var limit = 20

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit must be 0 or more") }
    }

    func execute() throws {
        let now = try parseTime(self.now, option: "--now")
        let opened = try location.openForReading()
        position.reportLag(of: opened)
        let store = try userOption.space(in: opened)
        try printHits(try store.search(text, now: now, limit: limit, after: position.after, timeout: position.timeout), json: json)
    }
}
