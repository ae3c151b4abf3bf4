import ActivityDomain
import ArgumentParser

struct UsersCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "The user spaces of the store, with what each holds, by user.",
        discussion: """
            JSON: [{"user","activities","saved","items","documents"}], sorted by user (UTF-8 bytes);
            the default space is "" and is listed once something happened in it.

            Examples:
              eventlog users
              eventlog users --json
            """
    )

    @OptionGroup var location: StoreLocation

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let users = try location.openForReading().users()
        if json {
            Output.jsonArray(try users.map(ViewJSON.value))
        } else {
            Output.table(["USER", "ACTIVITIES", "SAVED", "ITEMS", "DOCUMENTS"], users.map {
                [$0.user.isEmpty ? "\"\" (default)" : $0.user, "\($0.activities)", "\($0.saved)", "\($0.items)", "\($0.documents)"]
            })
        }
    }
}
