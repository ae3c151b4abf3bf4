import ActivityDomain
import ArgumentParser
import EventLog

struct VerifyCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the whole log: checksums, payload digests, hash chain, payloads, checkpoints.",
        discussion: """
            Prints the first problem (its position, kind and detail) and exits 1, or prints what was
            checked and exits 0. Runs beside writers, up to the head found when it starts.
            JSON: {"valid","head","recordsChecked","bytesChecked","lastLink","problem":{"position","kind","detail"}}.

            Examples:
              eventlog verify
              eventlog verify --json
            """
    )

    @OptionGroup var location: StoreLocation

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let store = try location.openExisting()
        let progress = Progress()
        let report = try store.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload) { walk in
            progress.update("verifying: position \(walk.position) of \(walk.end), \(walk.bytes >> 20) MiB, \(progress.rate(walk.position)) records")
        }
        progress.finish()
        if json {
            var members: [String: JSONValue] = [
                "valid": .bool(report.isValid),
                "head": .integer(Int64(report.head)),
                "recordsChecked": .integer(Int64(report.recordsChecked)),
                "bytesChecked": .integer(Int64(report.bytesChecked)),
                "lastLink": .string("\(report.lastLink)"),
            ]
            if let problem = report.firstProblem {
                members["problem"] = .object([
                    "position": .integer(Int64(problem.position)),
                    "kind": .string(problem.kind.rawValue),
                    "detail": .string(problem.detail),
                ])
            }
            Output.json(.object(members))
        } else if report.isValid {
            Output.line("ok: \(report.recordsChecked) records, \(report.bytesChecked) bytes, head \(report.head), last link \(report.lastLink)")
        }
        if let problem = report.firstProblem {
            Output.error("eventlog verify: the log is corrupt at position \(problem.position): \(problem.kind.rawValue): \(problem.detail)")
            throw ExitCode.failure
        }
    }
}
