import ActivityDomain
import ArgumentParser

/// `--user U`, shared by every subcommand that reads or changes one user's
/// data: the user space it acts in (SPEC §9). Default: the default space `""`.
struct UserOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The user space.", discussion: "Default: the default space \"\".", valueName: "user"))
    var user: String = ""

    /// `store`'s handle of this user, after checking the name as every
    /// command does (``ActivityRules/checkUser(_:operation:)``; its bytes
    /// were checked for UTF-8 before parsing: ``RawArguments``).
    func space(in store: ActivityStore) throws -> UserSpace {
        try ActivityRules.checkUser(user, operation: "--user")
        return store.user(user)
    }
}
