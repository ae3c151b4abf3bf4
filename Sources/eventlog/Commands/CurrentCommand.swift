import ActivityDomain
import ArgumentParser

struct CurrentCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "current",
        abstract: "The current activity of each of a user's devices, by device.",
        discussion: """
            JSON: [{"device","activity","activityType","title"}], sorted by device.

            Examples:
              eventlog current
              eventlog current --user alice --device iPhone --json
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var userOption: UserOption

    @Option(help: "Only this device.")
    var device: String?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let store = try userOption.space(in: try location.openForReading())
        let list: [CurrentActivity]
        if let device {
            list = try store.currentActivity(onDevice: device).map { [$0] } ?? []
        } else {
            list = try store.currentActivities()
        }
        if json {
            Output.jsonArray(list.map(ViewJSON.current))
        } else {
            Output.table(["DEVICE", "ACTIVITY", "TYPE", "SINCE", "TITLE"], list.map {
                [$0.device, $0.activity.activity, $0.activity.activityType, Output.time($0.becameCurrentAt), $0.activity.title ?? ""]
            })
        }
    }
}
