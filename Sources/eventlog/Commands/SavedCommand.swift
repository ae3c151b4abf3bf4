import ActivityDomain
import ArgumentParser

struct SavedCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "saved",
        abstract: "The saved activities (for search and prediction), by key.",
        discussion: """
            JSON: [{"key","activity","activityType","persistentIdentifier","title","keywords","userInfo","expirationDate"}],
            sorted by key (UTF-8 bytes); keywords sorted; userInfo in the tagged JSON of apply's input.

            Example:
              eventlog saved --json
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var userOption: UserOption

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let store = try userOption.space(in: try location.openForReading())
        let saved = try store.savedActivities()
        if json {
            Output.jsonArray(saved.map(ViewJSON.saved))
        } else {
            Output.table(["KEY", "ACTIVITY", "TYPE", "SAVED", "TITLE"], saved.map {
                [$0.key, $0.activity.activity, $0.activity.activityType, Output.time($0.savedAt), $0.activity.title ?? ""]
            })
        }
    }
}
