import ActivityDomain
import ArgumentParser

struct ResolveCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Resolve a persistentIdentifier, targetContentIdentifier or webpageURL.",
        discussion: """
            The saved activity it names; or, when that is gone, when and by which operation (log
            position) it was removed; or unknown. Links never fail silently.
            JSON: {"identifier","status":"saved"|"removed"|"unknown","saved":{…},"removal":{"key","position","operation","removedAt"}}.

            Examples:
              eventlog resolve order-42
              eventlog resolve https://example.com/orders/42 --json
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var userOption: UserOption

    @Argument(help: "The identifier or URL.")
    var identifier: String

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let store = try userOption.space(in: try location.openForReading())
        let resolution = try store.resolve(identifier)
        if json {
            Output.json(ViewJSON.resolution(identifier, resolution))
            return
        }
        switch resolution {
        case .saved(let saved):
            Output.line("saved under \(saved.key): activity \(saved.activity.activity) (\(saved.activity.activityType))"
                + (saved.activity.title.map { " \"\($0)\"" } ?? "") + ", saved \(Output.time(saved.savedAt)) at position \(saved.position)")
        case .removed(let removal):
            Output.line("removed: the copy under \(removal.key) was removed by \(removal.operation) at position \(removal.position), "
                + Output.time(removal.removedAt))
        case .unknown:
            Output.line("unknown: \(identifier) never named a saved activity")
        }
    }
}
