import ArgumentParser

struct ItemsCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "items",
        abstract: "The searchable items, by identifier.",
        discussion: """
            JSON: [{"uniqueIdentifier","domainIdentifier","attributeSet","expirationDate"}], by identifier.

            Examples:
              eventlog items
              eventlog items --domain orders --json
            """
    )

    @OptionGroup var location: StoreLocation

    @Option(help: "Only this domain and the domains below it.")
    var domain: String?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        throw coreSpotlightNotSupported("items")
    }
}
