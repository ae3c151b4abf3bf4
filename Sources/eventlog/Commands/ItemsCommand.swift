import ActivityDomain
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
    @OptionGroup var userOption: UserOption

    @Option(help: "Only this domain and the domains below it.")
    var domain: String?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let store = try userOption.space(in: try location.openForReading())
        let items = try domain.map { try store.items(inDomain: $0) } ?? store.items()
        if json {
            Output.jsonArray(items.map(ViewJSON.item))
        } else {
            Output.table(["IDENTIFIER", "DOMAIN", "EXPIRES", "TITLE"], items.map {
                [$0.uniqueIdentifier, $0.item.domainIdentifier ?? "", $0.item.expirationDate.map(Output.time) ?? "",
                 $0.item.attributeSet.title ?? $0.item.attributeSet.displayName ?? ""]
            })
        }
    }
}
