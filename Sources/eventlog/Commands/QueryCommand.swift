import ActivityDomain
import ArgumentParser
import TextIndex

struct QueryCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run a query in the CSSearchQuery subset of SPEC §5.",
        discussion: """
            JSON: [{"kind","identifier","score"}], by identifier. A malformed query is an error naming its column.

            Example:
              eventlog query 'title == "latte*"cd && keywords == "coffee"c' --json
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var userOption: UserOption

    @Argument(help: "The query.")
    var expression: String

    @Option(help: "The time $time.now and expiry use (ISO-8601; default: the clock).")
    var now: String?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let now = try parseTime(self.now, option: "--now")
        let store = userOption.space(in: try location.openForReading())
        try printHits(try store.query(expression, now: now), json: json)
    }
}
