import ArgumentParser
import Foundation

/// `eventlog`: the operator's tool for an activity event-log store.
@main
struct EventLogTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventlog",
        abstract: "Apply operations to an activity event-log store, read its views, audit its log.",
        discussion: """
            Every subcommand takes --store DIR (default: $EVENTLOG_STORE, else ./eventlog-data).
            Listings take --json for the stable shapes of Docs/CLI.md.

            Examples:
              eventlog demo
              eventlog apply --store /var/lib/app/events operations.jsonl
              eventlog current --json
              eventlog log --from 100 --limit 10 --json
              eventlog verify
              eventlog replay --verify
              eventlog forget --user alice
              eventlog compact
              eventlog bench --corpus items.jsonl.gz --queries queries.txt
              eventlog ship --to postgres://app@db/events --stream shard-1
              eventlog follow --from postgres://app@db/events --stream shard-1 --store /var/lib/app/follower
            """,
        subcommands: [
            DemoCommand.self,
            ApplyCommand.self,
            ForgetCommand.self,
            LogCommand.self,
            CurrentCommand.self,
            SavedCommand.self,
            HandoffCommand.self,
            ResolveCommand.self,
            SuggestionsCommand.self,
            UsersCommand.self,
            ItemsCommand.self,
            SearchCommand.self,
            QueryCommand.self,
            ClientStateCommand.self,
            StatsCommand.self,
            VerifyCommand.self,
            ReplayCommand.self,
            SnapshotCommand.self,
            CompactCommand.self,
            BenchCommand.self,
            BenchSettingCommand.self,
            BenchQueriesCommand.self,
            ShipCommand.self,
            FollowCommand.self,
            RestoreCommand.self,
        ]
    )

    /// Checks the arguments' bytes (``RawArguments``) before
    /// swift-argument-parser decodes them, then runs the command.
    static func main() async {
        if let problem = RawArguments.firstInvalid(in: RawArguments.current) {
            Output.error("eventlog: \(problem); names are compared as their exact bytes, so every argument must be UTF-8")
            RawArguments.terminate(ExitCode.validationFailure.rawValue)
        }
        await main(nil)
    }
}
