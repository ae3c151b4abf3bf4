import ActivityDomain
import ArgumentParser
import TextIndex

struct QueryCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run a query in the CSSearchQuery subset of SPEC §5.",
        discussion: """
            JSON: [{"kind","identifier","score"}], by identifier. A malformed query is an error naming its column.

            The keyword index follows the log: a write is searchable shortly after it returns. With --after P
            (a position a write printed) the read first waits, up to --wait seconds, until the index has
            applied the log through P, else fails saying how far behind it is; without it, it answers from
            the index as it is, and a note on stderr says when that lags the log.

            Example:
              eventlog query 'title == "latte*"cd && keywords == "coffee"c' --json
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var userOption: UserOption
    @OptionGroup var position: IndexWaitOption

    @Argument(help: "The query.")
    var expression: String

    @Option(help: "The time $time.now and expiry use (ISO-8601; default: the clock).")
    var now: String?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let now = try parseTime(self.now, option: "--now")
        let opened = try location.openForReading()
        position.reportLag(of: opened)
        let store = try userOption.space(in: opened)
        try printHits(try store.query(expression, now: now, after: position.after, timeout: position.timeout), json: json)
    }
}
