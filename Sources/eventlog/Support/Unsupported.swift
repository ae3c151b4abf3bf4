/// The Core Spotlight side (items, the keyword index, client states) is
/// being added to ActivityDomain; until its views are in this build, the
/// commands that read them say so plainly instead of printing an empty list.
func coreSpotlightNotSupported(_ command: String) -> CLIError {
    CLIError("\(command) is not supported yet: this build has no Core Spotlight item store or keyword index")
}
