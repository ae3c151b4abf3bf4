import ActivityDomain
import ArgumentParser

/// `--user U`, shared by every subcommand that reads or changes one user's
/// data: the user space it acts in (SPEC §9). Default: the default space `""`.
struct UserOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The user space.", discussion: "Default: the default space \"\".", valueName: "user"))
    var user: String = ""

    /// `store`'s handle of this user.
    func space(in store: ActivityStore) -> UserSpace {
        store.user(user)
    }
}
