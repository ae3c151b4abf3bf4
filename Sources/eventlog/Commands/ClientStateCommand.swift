import ActivityDomain
import ArgumentParser

struct ClientStateCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "client-state",
        abstract: "The client state the last committed index batch stored (fetchLastClientState).",
        discussion: """
            With --index: {"index","clientState"}, clientState in base64, or null when none is stored.
            Without: every stored state, [{"index","clientState"}] by index name.

            Examples:
              eventlog client-state --index orders-indexer --json
              eventlog client-state
            """
    )

    @OptionGroup var location: StoreLocation
    @OptionGroup var userOption: UserOption

    @Option(help: "The named index (default: every index that has a state).")
    var index: String?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let store = try userOption.space(in: try location.openForReading())
        if let index {
            let state = try store.fetchLastClientState(index: index)
            if json {
                Output.json(.object(["index": .string(index), "clientState": state.map { .string($0.base64EncodedString()) } ?? .null]))
            } else {
                Output.line(state.map { "\(index): \($0.base64EncodedString())" } ?? "\(index): no client state")
            }
            return
        }
        let states = try store.clientStates()
        if json {
            Output.jsonArray(try states.map(ViewJSON.value))
        } else {
            Output.table(["INDEX", "CLIENT STATE (BASE64)"], states.map { [$0.index, $0.clientState.base64EncodedString()] })
        }
    }
}
