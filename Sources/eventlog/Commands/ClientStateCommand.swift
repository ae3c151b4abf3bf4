import ArgumentParser

struct ClientStateCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "client-state",
        abstract: "The client state the last committed index batch stored (fetchLastClientState).",
        discussion: """
            JSON: {"index","clientState"} with clientState in base64, or null when none is stored.

            Example:
              eventlog client-state --index orders-indexer --json
            """
    )

    @OptionGroup var location: StoreLocation

    @Option(help: "The named index (default: the unnamed one).")
    var index: String?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        throw coreSpotlightNotSupported("client-state")
    }
}
