import Foundation
import Testing

/// `eventlog forget` killed with SIGKILL at many points (SPEC §10): a user
/// with about 2,200 events spread over the log, a snapshot before them and
/// one after; each run on a fresh copy of that store. The kill falls
///
/// - just before or just after a chosen write, sync or file removal of the
///   store, through the fault shim's `FAULT_KILL` (`FaultShim/faultshim.c`):
///   the snapshot's removal, the commit's page writes, its data sync and its
///   meta page write, so that every stage of the commit is reached however
///   fast or slow the machine;
/// - at delays spread over a clean run's duration (the store's opening, the
///   transaction being built in memory).
///
/// After each: either all of the forget happened (the redaction record at
/// the next position, none of the user's events readable, the user gone
/// from the views, the snapshot after the user's first event removed) or
/// none of it (the user's events and views all there); `verify` passes and
/// `replay --verify` finds the views equal to a replay.
@Suite("forget killed", .serialized)
struct ForgetKillTests {
    static let victim = "victim"

    /// The starting store's operations: other users', then the victim's
    /// interleaved with others'. Returns (before the victim, the rest).
    static func operations() -> ([String], [String]) {
        var first = [ForgetCommandTests.declare]
        for u in 0..<10 {
            first.append(#"{"op":"createActivity","user":"o\#(u)","activity":"a","activityType":"com.example.app.viewOrder","device":"phone","title":"Other \#(u)","eligibleForSearch":true,"persistentIdentifier":"k"}"#)
            first.append(#"{"op":"becomeCurrent","user":"o\#(u)","activity":"a"}"#)
            first.append(#"{"op":"indexSearchableItems","user":"o\#(u)","items":[{"uniqueIdentifier":"i","attributeSet":{"title":"Other item \#(u)"}}]}"#)
        }
        var rest: [String] = []
        for i in 0..<560 {
            let v = victim
            rest.append(#"{"op":"createActivity","user":"\#(v)","activity":"v\#(i)","activityType":"com.example.app.viewOrder","device":"d\#(i % 3)","title":"Victim \#(i)","keywords":["k\#(i % 17)"],"eligibleForSearch":true,"persistentIdentifier":"p\#(i % 50)"}"#)
            rest.append(#"{"op":"becomeCurrent","user":"\#(v)","activity":"v\#(i)"}"#)
            rest.append(#"{"op":"indexSearchableItems","user":"\#(v)","items":[{"uniqueIdentifier":"item\#(i % 200)","domainIdentifier":"d\#(i % 5)","attributeSet":{"title":"Victim item \#(i)","keywords":["w\#(i % 13)"]}}]}"#)
            if i % 9 == 0 {
                rest.append(#"{"op":"indexSearchableItems","user":"o\#(i % 10)","items":[{"uniqueIdentifier":"j\#(i)","attributeSet":{"title":"Other later \#(i)"}}]}"#)
            }
        }
        return (first, rest)
    }

    /// How a kill is placed.
    enum Kill: CustomStringConvertible {
        case beforeCall(Int), afterCall(Int), after(seconds: Double)
        var description: String {
            switch self {
            case .beforeCall(let n): "kill before call \(n)"
            case .afterCall(let n): "kill after call \(n)"
            case .after(let seconds): String(format: "kill after %.3f s", seconds)
            }
        }
    }

    @Test("SIGKILL at any point of a forget leaves all of it or none, a verified log and views equal to a replay")
    func killedForget() throws {
        let shim = try FaultShim.library()
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let base = dir.sub("base/store")
        let (first, rest) = Self.operations()
        #expect(try CLI.run(["apply", "--store", base, try dir.file("first.jsonl", first)]).status == 0)
        let early = try #require(try CLI.run(["snapshot", "create", "--store", base, "--json"]).object()["position"] as? Int)
        #expect(try CLI.run(["apply", "--store", base, "--transaction-size", "500", try dir.file("rest.jsonl", rest)]).status == 0)
        let late = try #require(try CLI.run(["snapshot", "create", "--store", base, "--json"]).object()["position"] as? Int)
        let head = late
        let victimEvents = try Self.victimLog(base)
        #expect(victimEvents >= 2_000, "the victim has \(victimEvents) events")

        // A clean run: its duration and its count of writes, syncs and removals.
        let clean = dir.sub("clean/store")
        try copyStore(base, to: clean)
        let started = Date()
        let cleanRun = try Self.forget(clean, shim: shim, watching: dir.sub("clean"), kill: nil)
        let duration = Date().timeIntervalSince(started)
        #expect(cleanRun.status == 0 && !cleanRun.killed)
        let calls = cleanRun.calls
        #expect(calls > 4, "the shim saw \(calls) calls")
        try check(clean, head: head, victimEvents: victimEvents, early: early, late: late, label: "clean")

        var kills: [Kill] = [1, 2, calls / 4, calls / 2, 3 * calls / 4, calls - 1, calls].map { .beforeCall(max(1, $0)) }
        kills += [1, calls / 3, 2 * calls / 3, calls - 1, calls].map { .afterCall(max(1, $0)) }
        kills += (1...6).map { .after(seconds: duration * Double($0) / 7) }
        var outcomes: [Bool: Int] = [:]
        for (index, kill) in kills.enumerated() {
            let run = dir.sub("run-\(index)")
            let store = (run as NSString).appendingPathComponent("store")
            try copyStore(base, to: store)
            let result = try Self.forget(store, shim: shim, watching: run, kill: kill)
            if case .after = kill {} else {
                #expect(result.killed, "\(kill) of \(calls): the process was not killed (status \(result.status))")
            }
            let forgotten = try check(store, head: head, victimEvents: victimEvents, early: early, late: late, label: "\(kill) of \(calls)")
            outcomes[forgotten, default: 0] += 1
            try? FileManager.default.removeItem(atPath: run)
        }
        // Placed by call, not by time: a kill before the meta page's write
        // loses the forget, one after it keeps it, on any machine.
        #expect(outcomes[false, default: 0] > 0 && outcomes[true, default: 0] > 0, "outcomes: \(outcomes)")
        print("forget killed: the victim's \(victimEvents) events of \(head); \(kills.count) kills over \(calls) writes, syncs and removals and \(String(format: "%.2f", duration)) s; "
            + "\(outcomes[true, default: 0]) kept the whole forget, \(outcomes[false, default: 0]) none of it")
    }

    /// Checks the store after a (killed) forget and returns whether the forget happened.
    @discardableResult
    func check(_ store: String, head: Int, victimEvents: Int, early: Int, late: Int, label: String) throws -> Bool {
        let verify = try CLI.run(["verify", "--store", store, "--json"])
        #expect(verify.status == 0, "\(label): verify: \(verify.stdout) \(verify.stderr)")
        let now = try #require(try verify.object()["head"] as? Int, "\(label): \(verify.stdout)")
        #expect(now == head || now == head + 1, "\(label): head \(now), was \(head)")
        let forgotten = now == head + 1
        let readable = try Self.victimLog(store)
        #expect(readable == (forgotten ? 0 : victimEvents), "\(label): \(readable) of the victim's \(victimEvents) events readable; forgotten: \(forgotten)")
        let users = try CLI.run(["users", "--store", store, "--json"]).objects().compactMap { $0["user"] as? String }
        #expect(users.contains(Self.victim) == !forgotten, "\(label): users \(users); forgotten: \(forgotten)")
        let snapshots = (try? FileManager.default.contentsOfDirectory(atPath: store + "/snapshots")) ?? []
        #expect(snapshots.contains { $0.hasPrefix(String(format: "%020d", early)) }, "\(label): the snapshot before the victim's events is gone: \(snapshots)")
        if forgotten {
            #expect(!snapshots.contains { $0.hasPrefix(String(format: "%020d", late)) }, "\(label): the snapshot with the victim's data is left")
        }
        // A kill may leave the index behind the forget: the next open for writing catches it up.
        let open = try CLI.run(["apply", "--store", store, "-"], input: "")
        #expect(open.status == 0, "\(label): open for writing: \(open.stderr)")
        let replay = try CLI.run(["replay", "--verify", "--store", store])
        #expect(replay.status == 0, "\(label): replay --verify: \(replay.stdout) \(replay.stderr)")
        let found = try CLI.run(["search", "victim", "--store", store, "--user", Self.victim, "--json"])
        #expect(found.status == 0, "\(label): search as the victim: \(found.stderr)")
        #expect(try found.objects().isEmpty == forgotten, "\(label): search as the victim: \(found.stdout); forgotten: \(forgotten)")
        return forgotten
    }

    /// How many of the victim's events `log` can read (redacted ones it cannot).
    static func victimLog(_ store: String) throws -> Int {
        let run = try CLI.run(["log", "--store", store, "--user", victim, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\n").count
    }

    struct Run {
        var status: Int32
        var killed: Bool
        var calls: Int
    }

    /// `eventlog forget --user victim` under the shim, killed as `kill` says.
    static func forget(_ store: String, shim: String, watching: String, kill: Kill?) throws -> Run {
        let report = watching + "-report"
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "EVENTLOG_STORE")
        env["LD_PRELOAD"] = shim
        env["FAULT_PATH"] = watching + "/"
        // The index environment is written as the indexer's timing has it: kills are placed among the log's calls.
        env["FAULT_EXCLUDE"] = "/index/"
        env["FAULT_REPORT"] = report
        switch kill {
        case .beforeCall(let n): env["FAULT_NTH"] = String(n); env["FAULT_KILL"] = "before"
        case .afterCall(let n): env["FAULT_NTH"] = String(n); env["FAULT_KILL"] = "after"
        case .after, nil: env["FAULT_NTH"] = "0"; env["FAULT_KILL"] = "count"
        }
        let process = try CLI.spawn(CLI.executable.path, arguments: ["forget", "--store", store, "--user", victim, "--at", "2026-11-23T00:00:00Z"],
                                    environment: env, stdin: "/dev/null", stdout: "/dev/null", stderr: "/dev/null")
        if case .after(let seconds) = kill {
            Thread.sleep(forTimeInterval: seconds)
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }
        // A generous bound: a forget that hangs fails the test rather than the run.
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let fields = ((try? String(contentsOfFile: report, encoding: .utf8)) ?? "").split(separator: " ")
        return Run(status: process.terminationStatus, killed: process.terminationReason == .uncaughtSignal,
                   calls: fields.count >= 2 ? Int(fields[1]) ?? 0 : 0)
    }

    func copyStore(_ source: String, to target: String) throws {
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source, toPath: target)
    }
}
