import ActivityDomain
import ArgumentParser
import Foundation

/// `eventlog forget --user U`: erases a user (SPEC §10) through
/// ``ActivityStore/forgetUser(_:at:)``, in one transaction.
struct ForgetCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget a user: redact every event of their space and drop their data from every view.",
        discussion: """
            In one transaction: a redaction record (eventlog.redaction) names every event of the user's
            space; those events lose their payloads (positions, types, times and digests stay, so the log
            still verifies); every view drops the user. Snapshots at or after the first redacted event are
            removed. Time travel (replay --to P) never brings the user back, for any P.
            A user with no events in the store (never seen, or forgotten with nothing since) is not an
            error: nothing is written and 0 events are reported. The default space "" cannot be forgotten.
            LMDB may keep the old bytes in freed pages until they are reused: see Docs/Semantics.md.
            JSON: {"user","position","redactedEvents","removedSnapshots","head"} ("position", the
            redaction record's, is absent when nothing was forgotten).

            Examples:
              eventlog forget --user alice
              eventlog forget --store /var/lib/app/events --user alice --json
            """
    )

    @OptionGroup var location: StoreLocation

    @Option(help: ArgumentHelp("The user to forget (1 to 256 UTF-8 bytes; not the default space \"\").", valueName: "user"))
    var user: String

    @Option(help: ArgumentHelp("The time the redaction record records (ISO-8601); default: the clock.", valueName: "time"))
    var at: String?

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        // The name first: a bad one opens nothing and writes nothing.
        guard !user.isEmpty else {
            throw CLIError("forget: --user is \"\", the default space, which holds the app's own data and cannot be forgotten; "
                + "allowed: a user's name, 1 to \(ActivityRules.maxIdentifierBytes) UTF-8 bytes without NUL")
        }
        try ActivityRules.checkUser(user, operation: "forgetUser")
        let time = try at.map { try parseTime($0, option: "--at") }
        let store = try location.openExisting()
        let progress = Progress()
        progress.update("forgetting \(user): one transaction…")
        let result = try store.forgetUser(user, at: time)
        progress.finish()
        // Committed: said even when the index then cannot follow (its caller must not forget again blindly).
        var indexFailure: (any Error)?
        do { try StoreLocation.waitUntilSearchable(store) } catch { indexFailure = error }
        let head = try store.head()
        if json {
            var members: [String: JSONValue] = [
                "user": .string(user),
                "redactedEvents": .integer(Int64(result.redactedEvents)),
                "removedSnapshots": .array(result.removedSnapshots.map { .integer(Int64($0)) }),
                "head": .integer(Int64(head)),
            ]
            if let position = result.positions?.lowerBound { members["position"] = .integer(Int64(position)) }
            if let indexFailure { members["error"] = .string("\(indexFailure)") }
            Output.json(.object(members))
        } else if let position = result.positions?.lowerBound {
            let snapshots = result.removedSnapshots.isEmpty ? "no snapshot removed"
                : "\(result.removedSnapshots.count) snapshot\(result.removedSnapshots.count == 1 ? "" : "s") removed (at "
                    + result.removedSnapshots.map(String.init).joined(separator: ", ") + ")"
            Output.line("forgot \(user): \(result.redactedEvents) events redacted by the redaction record at position \(position); "
                + "\(snapshots); head at \(head)")
        } else {
            Output.line("\(user) has no events in the store (never seen, or already forgotten with nothing since): "
                + "nothing to forget, 0 events redacted, nothing written; head at \(head)")
        }
        if let indexFailure { throw indexFailure }
    }
}
