import ActivityDomain
import ArgumentParser

struct HandoffCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff",
        abstract: "What Handoff offers a user on a device.",
        discussion: """
            The activities current on the user's other devices (only theirs), eligible for handoff, not expired at
            --now and with a small enough userInfo; the most recently made current first.
            JSON: [{"device","activity","activityType","title"}].

            Example:
              eventlog handoff --user u1 --device iPad --now 2026-11-22T10:00:00Z --json
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var userOption: UserOption

    @Option(help: "The device asking (its own activities are not offered).")
    var device: String

    @Option(help: "The time expiry is judged at (ISO-8601; default: the clock).")
    var now: String?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let now = try parseTime(self.now, option: "--now")
        let store = try userOption.space(in: try location.openForReading())
        let offers = try store.handoffCandidates(device: device, now: now)
        if json {
            Output.jsonArray(offers.map(ViewJSON.current))
        } else {
            Output.table(["DEVICE", "ACTIVITY", "TYPE", "SINCE", "TITLE"], offers.map {
                [$0.device, $0.activity.activity, $0.activity.activityType, Output.time($0.becameCurrentAt), $0.activity.title ?? ""]
            })
        }
    }
}
