import ActivityDomain
import ArgumentParser
import Foundation

struct SuggestionsCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "suggestions",
        abstract: "Saved activities to suggest to a user (Siri predictions), best first.",
        discussion: """
            The user's saved activities eligible for prediction and not expired at --now, ranked by
            how often and how recently each became current (frecency, Docs/Semantics.md), then by key.
            JSON: [{"key","activity","activityType","title","score"}].

            Example:
              eventlog suggestions --user alice --now 2026-11-22T10:00:00Z --json
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var userOption: UserOption

    @Option(help: "The time scores and expiry are judged at (ISO-8601; default: the clock).")
    var now: String?

    @Option(help: "At most this many.")
    var limit = 10

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit must be 0 or more") }
    }

    func execute() throws {
        let now = try parseTime(self.now, option: "--now")
        let suggestions = try userOption.space(in: try location.openForReading()).suggestions(now: now, limit: limit)
        if json {
            Output.jsonArray(suggestions.map(ViewJSON.suggestion))
        } else {
            Output.table(["KEY", "ACTIVITY", "TYPE", "SCORE", "TITLE"], suggestions.map {
                [$0.key, $0.activity.activity, $0.activity.activityType, String(format: "%.4f", $0.score), $0.activity.title ?? ""]
            })
        }
    }
}
