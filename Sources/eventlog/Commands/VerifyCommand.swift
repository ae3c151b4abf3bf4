import ActivityDomain
import ArgumentParser
import EventLog

struct VerifyCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the whole log (checksums, digests, hash chain, payloads, checkpoints) and snapshot digests.",
        discussion: """
            Prints the first problem (its position, kind and detail) and exits 1, or prints what was
            checked and exits 0. Runs beside writers, up to the head found when it starts.
            Also checks every snapshot's digest (the views' and the index's) and its history: a snapshot of another
            history, or one past the head (the log has lost records), fails verify. A follower or a restore that took redacted records before
            the redaction record that redacted them (still past its head) lists it as pending: valid, but
            proven only once the log reaches it (Docs/LogFormat.md, "Pending authorizations").
            JSON: {"valid","head","recordsChecked","bytesChecked","lastLink",
            "problem":{"position","kind","detail"},
            "snapshots":[{"kind","position","link","path","bytes","projections","valid","history"}],
            "pendingRedactions":[{"position","link","covers"}],"indexProblem",
            "index":{"position","link","history","logHead","logLink"}}: the index's history, "thisLog", "aheadOfLog" or
            "anotherHistory" (SPEC §2: the log vouches for everything derived from it).
            A store whose index (index/, derived from the log) is damaged, cannot be read, or was not built
            from this log (another history, or ahead of the log: the log has lost records): the log is
            checked as ever, then verify says what is wrong with the index, naming both positions, and exits 1.

            Examples:
              eventlog verify
              eventlog verify --json
            """
    )

    @OptionGroup var location: StoreLocation

    @Flag(help: "Print JSON.")
    var json = false

    func execute() throws {
        let store = try location.openForReading()
        let progress = Progress()
        let report = try store.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload) { walk in
            progress.update("verifying: position \(walk.position) of \(walk.end), \(walk.bytes >> 20) MiB, \(progress.rate(walk.position)) records")
        }
        progress.finish()
        // Snapshot digests too (issue 5): a damaged snapshot is ignored by
        // rebuilds, but an operator should hear of it.
        let snapshots = try SnapshotCommand.checked(store.eventStore)
        let damaged = snapshots.filter { !$0.valid }.map { Self.name($0.snapshot) }
        // A snapshot the log does not vouch for is never used; one ahead of the log says the log lost records.
        let foreign = snapshots.filter { $0.valid && !$0.history.isThisLog && $0.history.standing != .unrecorded }
        let unrecorded = snapshots.filter { $0.valid && $0.history.standing == .unrecorded }
        // What the log vouches for: the index's position and link (SPEC §2).
        let indexHistory = try store.eventStore.indexHistory()
        if json {
            var members: [String: JSONValue] = [
                "valid": .bool(report.isValid),
                "head": .integer(Int64(report.head)),
                "recordsChecked": .integer(Int64(report.recordsChecked)),
                "bytesChecked": .integer(Int64(report.bytesChecked)),
                "lastLink": .string("\(report.lastLink)"),
                "snapshots": .array(snapshots.map { SnapshotCommand.json($0.snapshot, valid: $0.valid, history: $0.history) }),
                "pendingRedactions": .array(report.pendingRedactions.map {
                    .object(["position": .integer(Int64($0.position)), "link": .string("\($0.link)"), "covers": .integer(Int64($0.covers))])
                }),
            ]
            if let unusable = store.eventStore.indexUnavailable { members["indexProblem"] = .string(unusable.description) }
            if let history = indexHistory { members["index"] = Self.json(history) }
            if let problem = report.firstProblem {
                members["problem"] = .object([
                    "position": .integer(Int64(problem.position)),
                    "kind": .string(problem.kind.rawValue),
                    "detail": .string(problem.detail),
                ])
            }
            Output.json(.object(members))
        } else if report.isValid && damaged.isEmpty {
            Output.line("ok: \(report.recordsChecked) records, \(report.bytesChecked) bytes, head \(report.head), last link \(report.lastLink)"
                + (snapshots.isEmpty ? "" : "; \(snapshots.count) snapshots with sound digests"))
            for (snapshot, _, history) in snapshots { Output.line("\(Self.name(snapshot)): \(history)") }
            if let indexHistory { Output.line("index: \(indexHistory)") }
            for pending in report.pendingRedactions {
                Output.line("pending: \(pending.covers) redacted records are authorized by the redaction record at position \(pending.position) "
                    + "(link \(pending.link)), past the head: proven once the log reaches it")
            }
        }
        if let problem = report.firstProblem {
            Output.error("eventlog verify: the log is corrupt at position \(problem.position): \(problem.kind.rawValue): \(problem.detail)")
            throw ExitCode.failure
        }
        if !damaged.isEmpty {
            Output.error("eventlog verify: \(damaged.joined(separator: ", ")) fail their digest "
                + "(rebuilds skip them; `eventlog snapshot delete P [--index]` removes one)")
            throw ExitCode.failure
        }
        for (snapshot, _, _) in unrecorded {
            Output.error("eventlog verify: note: \(Self.name(snapshot)) records no link of the log (a snapshot of an older format): "
                + "rebuilds never use it; `eventlog snapshot delete \(snapshot.position)\(snapshot.kind == .index ? " --index" : "")` removes it")
        }
        if let (snapshot, _, history) = foreign.first {
            let lost = foreign.contains { $0.history.isAheadOfLog }
            Output.error("eventlog verify: \(lost ? "the log has lost records: " : "")\(foreign.count) snapshot\(foreign.count == 1 ? " is" : "s are") not this log's "
                + "(rebuilds never use \(foreign.count == 1 ? "it" : "them")): "
                + foreign.map { "\(Self.name($0.snapshot)) at \($0.history)" }.joined(separator: "; ")
                + ". `eventlog snapshot delete \(snapshot.position)\(snapshot.kind == .index ? " --index" : "")` removes one"
                + (history.isAheadOfLog ? "; a log behind a snapshot has lost records: restore it (a follower, `eventlog restore`)" : ""))
            throw ExitCode.failure
        }
        // The index is derived from the log, yet an operator should hear of a damaged one.
        if let unusable = store.eventStore.indexUnavailable {
            if indexHistory?.isAheadOfLog == true {
                Output.error("eventlog verify: the log has lost records: \(unusable)")
            } else {
                Output.error("eventlog verify: the log is sound, but \(unusable)")
            }
            throw ExitCode.failure
        }
    }

    /// `the snapshot at 120` or `the index snapshot at 118`.
    static func name(_ snapshot: SnapshotInfo) -> String {
        "the \(snapshot.kind == .index ? "index snapshot" : "snapshot") at \(snapshot.position)"
    }

    /// `{"position","link","history"}` (`link` omitted when none was
    /// recorded; `logHead` for a file ahead of the log, `logLink` for one of
    /// another history).
    static func json(_ history: DerivedHistory) -> JSONValue {
        var members: [String: JSONValue] = ["position": .integer(Int64(history.position)), "history": .string(history.name)]
        if let link = history.link { members["link"] = .string("\(link)") }
        switch history.standing {
        case .aheadOfLog(let head): members["logHead"] = .integer(Int64(head))
        case .anotherHistory(let link): members["logLink"] = .string("\(link)")
        case .thisLog, .unrecorded: break
        }
        return .object(members)
    }
}
