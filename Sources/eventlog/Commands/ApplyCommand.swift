import ActivityDomain
import ArgumentParser
import Foundation

struct ApplyCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Apply JSON Lines operations (SPEC §6) to the store.",
        discussion: """
            One operation a line; "at" (ISO-8601) sets the time its events record, else the clock;
            "user" the user space it acts in (else --user, else the default space "").
            A line that fails is reported on stderr with its number and reason and writes nothing;
            the other lines are applied. Lines from beginIndexBatch to endIndexBatch stand or fall
            together. Lines are committed in transactions of --transaction-size lines.
            Exits 1 when any line was rejected. Creates the store when it is missing.
            A writer stopped mid-stream (its lock file replaced, a full disk, the index unreadable) still prints
            its summary: "committedThrough" is the last line of its last committed transaction (lines after it
            that are not among the rejected ones were not written), "error" why it stopped.

            Examples:
              eventlog apply operations.jsonl
              cat operations.jsonl | eventlog apply --store /var/lib/app/events --json -
              echo '{"op":"becomeCurrent","activity":"a1"}' | eventlog apply -
            """
    )

    @OptionGroup var location: StoreLocation

    @Option(help: ArgumentHelp("The user space of lines without \"user\" (default: the default space, and every space for purgeExpired).",
                               valueName: "user"))
    var user: String?

    @Argument(help: ArgumentHelp("The JSON Lines file, or - for standard input.", valueName: "file"))
    var file: String

    @Option(help: "Lines per transaction: larger is faster, smaller holds less in one commit.")
    var transactionSize = 500

    @Option(help: ArgumentHelp("Transactions handed over before the first is durable, so that lines are read and items tokenized "
                               + "while one commits; 0: each waits for its commit. The result is the same.", valueName: "n"))
    var pipeline = 2

    @Flag(help: "Print the summary as JSON: {\"applied\",\"rejected\",\"droppedUpdates\",\"events\",\"committedThrough\",\"head\",\"errors\",\"error\"}.")
    var json = false

    /// Rejections kept for the JSON summary; past this many only the count
    /// grows, so that memory stays bounded on a file of bad lines.
    static let maxReportedErrors = 10_000

    func validate() throws {
        guard transactionSize >= 1 else { throw ValidationError("--transaction-size must be at least 1") }
        guard (0...64).contains(pipeline) else { throw ValidationError("--pipeline \(pipeline): allowed: 0 to 64") }
    }

    func execute() throws {
        if let user { try ActivityRules.checkUser(user, operation: "--user") }
        let reader = try LineReader(path: file)
        let store = try location.openOrCreate()
        var errors: [JSONValue] = []
        let applier = OperationApplier(store: store, transactionSize: transactionSize, pipeline: pipeline, defaultUser: user) { rejection in
            Output.error("line \(rejection.line): \(rejection.message)")
            guard errors.count < Self.maxReportedErrors else { return }
            var members: [String: JSONValue] = ["line": .integer(Int64(rejection.line)), "message": .string(rejection.message)]
            if let column = rejection.column { members["column"] = .integer(Int64(column)) }
            if let operation = rejection.operation { members["operation"] = .string(operation) }
            if let field = rejection.field { members["field"] = .string(field) }
            errors.append(.object(members))
        }
        let progress = Progress()
        var number = 0
        // A writer that refuses mid-stream (its lock file replaced, a full disk) still says what it
        // committed, so that its caller knows which lines to send again.
        var failure: (any Error)?
        do {
            while let line = try reader.next() {
                number += 1
                switch line {
                case .bytes(let bytes): try applier.add(lineNumber: number, bytes: bytes)
                case .tooLong(let length):
                    applier.rejectLine(number, message: "the line is \(length) bytes, longer than the limit of \(LineReader.maxLineBytes) bytes "
                        + "(16 MiB); it was skipped unread. Split the operation into several lines")
                }
                progress.update("line \(number), \(applier.summary.applied) applied, \(applier.summary.rejected) rejected, \(progress.rate(UInt64(number))) lines")
            }
            try applier.finish()
        } catch {
            failure = error
        }
        progress.finish()
        if failure == nil {
            do { try StoreLocation.waitUntilSearchable(store) } catch { failure = error }
        }
        let summary = applier.summary
        let head = (try? store.head()).map(String.init) ?? "unknown"
        if json {
            var members: [String: JSONValue] = [
                "applied": .integer(Int64(summary.applied)),
                "rejected": .integer(Int64(summary.rejected)),
                "droppedUpdates": .integer(Int64(summary.droppedUpdates)),
                "events": .integer(Int64(summary.events)),
                "committedThrough": .integer(Int64(summary.committedThrough)),
                // Decoding failures are found as lines are read, rule failures
                // when their group commits: in line order for the reader.
                "errors": .array(errors.sorted { lineNumber($0) < lineNumber($1) }),
            ]
            if let head = try? store.head() { members["head"] = .integer(Int64(head)) }
            if let failure { members["error"] = .string("\(failure)") }
            Output.json(.object(members))
        } else {
            Output.line("applied \(summary.applied), rejected \(summary.rejected), dropped updates \(summary.droppedUpdates); "
                + "\(summary.events) events appended in \(summary.transactions) transactions; head at \(head)"
                + (failure == nil ? "" : "; stopped: lines after \(summary.committedThrough) that were not rejected were not written"))
        }
        if let failure { throw failure }
        if summary.rejected > 0 { throw ExitCode.failure }
    }

    private func lineNumber(_ error: JSONValue) -> Int64 {
        if case .integer(let line)? = error["line"] { return line }
        return 0
    }
}
