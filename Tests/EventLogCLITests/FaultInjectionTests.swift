import Foundation
import Testing

/// Disk faults injected into real `eventlog` processes: `FaultShim/faultshim.c`,
/// built here with the system's C compiler and loaded with `LD_PRELOAD`,
/// fails the Nth write, pwrite, writev, fsync or fdatasync on the store's
/// files with EIO or ENOSPC, once or from then on. For each command of
/// ``FaultWorkload/all``, N sweeps the command's whole run (the calls a clean
/// run makes, counted by the shim) and after each fault:
///
/// - the command exits with an error that names the I/O failure: no crash
///   (signal), no hang (a generous timeout);
/// - a clean process finds the log the command started from, plus whole
///   transactions of the command and nothing partial: its `log --json` is a
///   prefix of a clean run's that ends at a commit;
/// - `verify` passes and `replay --verify` finds the views equal to a replay;
/// - the store takes new writes (and the command's own follow-up checks pass).
///
/// By default each command's N is sampled evenly (at most
/// `maxFaultsPerCommand`, each N with one of the four kinds of fault in
/// turn); `EVENTLOG_FAULT_SWEEP=full` runs every N with every kind.
@Suite("Fault injection", .serialized)
struct FaultInjectionTests {
    static let maxFaultsPerCommand = 48

    @Test("a failed write or sync is a clean error that loses nothing acknowledged", arguments: FaultWorkload.all)
    func sweep(_ workload: FaultWorkload) async throws {
        if workload.sockets {
            try await Postgres.shared { try sweepRun(workload) }   // no other test crashes the server meanwhile
        } else {
            try sweepRun(workload)
        }
    }

    private func sweepRun(_ workload: FaultWorkload) throws {
        let shim = try FaultShim.library()
        let dir = TemporaryDirectory()
        defer { dir.remove() }

        // The store the command starts from, and a clean run of the command.
        let base = dir.sub("base/store")
        try workload.prepare(base, dir)
        let baseLog = try logLines(base)
        let clean = dir.sub("clean/store")
        try copyStore(base, to: clean)
        let cleanRun = try FaultShim.run(workload.command(clean, dir), shim: shim, watching: dir.sub("clean"), excluding: workload.excluding,
                                         sockets: workload.sockets, fault: nil)
        #expect(cleanRun.status == 0, "\(workload.name) without a fault: \(cleanRun.stderr)")
        let calls = cleanRun.calls
        #expect(calls > 0, "\(workload.name): the shim saw no write or sync on the store\(workload.sockets ? " or its sockets" : ""): \(cleanRun)")
        let cleanLog = try logLines(clean)
        #expect(workload.rewritesLog || Array(cleanLog.prefix(baseLog.count)) == baseLog)
        let commits = Set([baseLog.count] + commitEnds(cleanLog).filter { $0 >= baseLog.count })

        let full = ProcessInfo.processInfo.environment["EVENTLOG_FAULT_SWEEP"] == "full"
        var faults: [(nth: Int, kind: FaultKind)] = []
        if full {
            faults = (1...calls).flatMap { n in FaultKind.allCases.map { (n, $0) } }
        } else {
            let count = min(calls, workload.maxFaults ?? Self.maxFaultsPerCommand)
            let picks = (0..<count).map { count == 1 ? 1 : 1 + $0 * (calls - 1) / (count - 1) }
            faults = Array(Set(picks)).sorted().enumerated().map { ($1, FaultKind.allCases[$0 % FaultKind.allCases.count]) }
        }

        var injected = 0
        for (index, fault) in faults.enumerated() {
            let label = "\(workload.name), call \(fault.nth) of \(calls), \(fault.kind)"
            let run = dir.sub("run-\(index)")
            let store = (run as NSString).appendingPathComponent("store")
            try copyStore(base, to: store)
            let result = try FaultShim.run(workload.command(store, dir), shim: shim, watching: run, excluding: workload.excluding,
                                           sockets: workload.sockets, fault: (fault.nth, fault.kind))
            #expect(!result.timedOut, "\(label): the command hung")
            #expect(result.signal == nil, "\(label): the command crashed with signal \(result.signal ?? 0): \(result.stderr)")
            if result.failedCalls > 0 {
                injected += 1
                #expect(result.status != 0, "\(label) (\(result.firstFailure)): the command succeeded")
                // A failed socket write resets the connection (ECONNRESET), whatever the kind.
                let message = result.firstFailure.contains("socket:") ? FaultShim.socketMessage : fault.kind.message
                #expect(result.stderr.contains(message), "\(label) (\(result.firstFailure)): unclear error: \(result.stderr)")
            }

            let verify = try CLI.run(["verify", "--store", store])
            #expect(verify.status == 0, "\(label): verify: \(verify.stdout) \(verify.stderr)")
            let log = try logLines(store)
            if workload.rewritesLog {
                // A forget rewrites records it redacts: the log is the starting one or the clean run's.
                #expect(log == baseLog || log == cleanLog,
                        "\(label): the log (\(log.count) records) is neither the starting one (\(baseLog.count)) nor the clean run's (\(cleanLog.count))")
            } else {
                #expect(commits.contains(log.count) && log == Array(cleanLog.prefix(log.count)),
                        "\(label): the log has \(log.count) records; whole commits end at \(commits.sorted())")
            }
            let replay = try CLI.run(["replay", "--verify", "--store", store])
            #expect(replay.status == 0, "\(label): replay --verify: \(replay.stdout) \(replay.stderr)")
            try workload.after(store, dir, label)
            let next = try dir.file("next-\(index).jsonl", [FaultWorkload.nextWrite])
            let write = try CLI.run(["apply", "--store", store, next])
            #expect(write.status == 0, "\(label): a new write after the fault: \(write.stderr)")
            try? FileManager.default.removeItem(atPath: run)
        }
        if workload.callsVary {
            #expect(injected > faults.count / 2, "\(workload.name): \(faults.count - injected) of \(faults.count) faults were never reached")
        } else {
            #expect(injected == faults.count, "\(workload.name): \(faults.count - injected) faults were never reached")
        }
        FaultShim.record(workload.name, calls: calls, faults: injected)
    }

    /// The log as `log --json` prints it, a record a line.
    func logLines(_ store: String) throws -> [String] {
        let log = try CLI.run(["log", "--json", "--store", store])
        #expect(log.status == 0, "log: \(log.stderr)")
        return log.stdout.split(separator: "\n").map(String.init)
    }

    /// The record counts at which a commit of `log` ends: every operation
    /// of the workloads has its own `at`, and all of a commit's events share it.
    func commitEnds(_ log: [String]) -> [Int] {
        let times = log.map { line -> String in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            return object?["at"] as? String ?? ""
        }
        return times.indices.filter { $0 + 1 == times.count || times[$0] != times[$0 + 1] }.map { $0 + 1 }
    }

    func copyStore(_ source: String, to target: String) throws {
        let parent = (target as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source, toPath: target)
    }
}

/// A command to fail, with the store it starts from and what must hold after.
/// Every command of the sweep: apply, snapshot create, replay, compact, forget, ship.
struct FaultWorkload: Sendable, CustomStringConvertible {
    var name: String
    /// Also fail the command's writes on sockets (its connection to PostgreSQL).
    var sockets = false
    /// At most this many faults in the sampled sweep (default ``FaultInjectionTests/maxFaultsPerCommand``).
    var maxFaults: Int? = nil
    /// Builds the starting store at `store` with clean processes.
    var prepare: @Sendable (_ store: String, _ dir: TemporaryDirectory) throws -> Void
    /// The command's arguments.
    var command: @Sendable (_ store: String, _ dir: TemporaryDirectory) throws -> [String]
    /// Checks of the command's own, after a fault (clean processes).
    var after: @Sendable (_ store: String, _ dir: TemporaryDirectory, _ label: String) throws -> Void = { _, _, _ in }
    /// The command rewrites records (a forget redacts them): after a fault
    /// the log must be the starting one or the clean run's, whole.
    var rewritesLog = false
    /// The command's calls vary from run to run (a pipeline groups what is
    /// queued into one transaction as timing has it; the indexer's read
    /// transactions of the log, begun as its threads' timing has it, decide
    /// which freed pages LMDB may reuse, and so how many writes a commit
    /// takes), so a fault at call N may lie past a faulted run's end.
    var callsVary = false
    /// Files left out of the sweep: the index environment's (`/index/`),
    /// which the indexer writes behind the log as its threads' timing has
    /// it; ``FaultInjectionTests/indexSweep(_:)`` sweeps those. Compaction
    /// writes both environments' files the same way every run: nil.
    var excluding: String? = "/index/"

    var description: String { name }

    /// The first operations, applied before the command runs.
    static let prefix = Array(Sample.good.prefix(5))

    /// A write the store must take after any fault.
    static let nextWrite = #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"after-fault","attributeSet":{"title":"After"}}],"at":"2026-11-23T00:00:00Z"}"#

    static func applyPrefix(_ store: String, _ dir: TemporaryDirectory) throws {
        let file = try dir.file("prefix.jsonl", prefix)
        let result = try CLI.run(["apply", "--store", store, file])
        #expect(result.status == 0, "\(result.stderr)")
    }

    static let all: [FaultWorkload] = local + (Postgres.enabled ? [ship] : [])

    static let local: [FaultWorkload] = [
        // Appends: each remaining line of the sample its own commit.
        // `--pipeline 0`: each commit waits for the one before, so every run makes the same calls.
        FaultWorkload(name: "apply", prepare: applyPrefix, command: { store, dir in
            ["apply", "--transaction-size", "1", "--pipeline", "0", "--store", store, try dir.file("rest.jsonl", Array(Sample.good.dropFirst(5)))]
        }),
        // The default pipeline: a transaction handed over while the one before commits.
        FaultWorkload(name: "apply pipelined", prepare: applyPrefix, command: { store, dir in
            ["apply", "--transaction-size", "1", "--pipeline", "2", "--store", store, try dir.file("rest.jsonl", Array(Sample.good.dropFirst(5)))]
        }, callsVary: true),
        // A snapshot: whole or absent, never a damaged one listed as valid.
        FaultWorkload(name: "snapshot create", prepare: { store, dir in
            try applyPrefix(store, dir)
        }, command: { store, _ in
            ["snapshot", "create", "--store", store]
        }, after: { store, _, label in
            let list = try CLI.run(["snapshot", "list", "--json", "--store", store])
            #expect(list.status == 0, "\(label): snapshot list: \(list.stderr)")
            for snapshot in try list.objects() {
                #expect(snapshot["valid"] as? Bool == true, "\(label): a damaged snapshot is left: \(snapshot)")
            }
            let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: (store as NSString).appendingPathComponent("snapshots"))) ?? [])
                .filter { !$0.hasSuffix(".snapshot") }
            #expect(leftovers.isEmpty, "\(label): partial files are left: \(leftovers)")
            let again = try CLI.run(["snapshot", "create", "--store", store])
            #expect(again.status == 0, "\(label): snapshot create after the fault: \(again.stderr)")
        }),
        // The rebuild's scratch environment and the swap into the live store.
        FaultWorkload(name: "replay", prepare: { store, dir in
            try applyPrefix(store, dir)
            let rest = try dir.file("rest.jsonl", Array(Sample.good.dropFirst(5)))
            #expect(try CLI.run(["apply", "--store", store, rest]).status == 0)
        }, command: { store, _ in
            ["replay", "--full", "--store", store]
        }, after: { store, _, label in
            let again = try CLI.run(["replay", "--store", store])
            #expect(again.status == 0, "\(label): replay after the fault: \(again.stderr)")
            let scratch = ((try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []).filter { $0.hasPrefix("replay-scratch") }
            #expect(scratch.isEmpty, "\(label): scratch environments are left: \(scratch)")
        }),
        // A compaction after a forget (freed pages to drop), the copy large
        // enough for LMDB to write it in several buffers: a failed write,
        // zeroing pwrite or sync of the copy leaves the old file, and no copy; a failed sync
        // of the directory after the rename leaves the new one, whole.
        FaultWorkload(name: "compact", prepare: { store, dir in
            // Long values, a transaction a line: overflow pages with stale tails, which compact zeroes (pwrite).
            let lines = Stores.operations(users: ["alice", "bob", "carol"], marked: "alice", rounds: 40, longTexts: true)
            #expect(try CLI.run(["apply", "--transaction-size", "1", "--store", store, try dir.file("users.jsonl", lines)]).status == 0)
            let forget = try CLI.run(["apply", "--store", store, "-"], input: #"{"op":"forgetUser","user":"alice","at":"2026-12-01T00:00:00Z"}"# + "\n")
            #expect(forget.status == 0, "\(forget.stderr)")
        }, command: { store, _ in
            ["compact", "--store", store]
        }, after: { store, _, label in
            #expect(!FileManager.default.fileExists(atPath: (store as NSString).appendingPathComponent("data.mdb.compacting")),
                    "\(label): the copy is left")
            #expect(!FileManager.default.fileExists(atPath: (store as NSString).appendingPathComponent("index/data.mdb.compacting")),
                    "\(label): the index's copy is left")
            let again = try CLI.run(["compact", "--store", store])
            #expect(again.status == 0, "\(label): compact after the fault: \(again.stderr)")
        }),
        forget,
    ].map { workload in
        var workload = workload
        if workload.name == "compact" { workload.excluding = nil }
        // A command that writes the log while its indexer reads it.
        if workload.name == "apply" || workload.name == "forget" { workload.callsVary = true }
        return workload
    }
}

extension FaultWorkload {
    /// The stream of the `ship` sweep, and the copy of its rows every run starts from.
    static let shipStream = Postgres.stream("fault-ship")
    static var shipTemplate: String { shipStream + "-start" }

    /// Copies the rows of stream `from` to stream `to` (replacing `to`'s) in the three tables.
    static func copyStream(_ from: String, to: String) throws {
        _ = try Postgres.psql("""
            BEGIN;
            DELETE FROM eventlog_streams WHERE stream = '\(to)';
            DELETE FROM eventlog_records WHERE stream = '\(to)';
            DELETE FROM eventlog_redactions WHERE stream = '\(to)';
            INSERT INTO eventlog_streams (stream, epoch, position, link) SELECT '\(to)', epoch, position, link FROM eventlog_streams WHERE stream = '\(from)';
            INSERT INTO eventlog_records (stream, position, epoch, record) SELECT '\(to)', position, epoch, record FROM eventlog_records WHERE stream = '\(from)';
            INSERT INTO eventlog_redactions (stream, last, first, redacted_by) SELECT '\(to)', last, first, redacted_by FROM eventlog_redactions WHERE stream = '\(from)';
            COMMIT;
            """)
    }

    /// "position hex" lines as a dictionary.
    static func rows(_ dump: String) -> [Int: String] {
        var result: [Int: String] = [:]
        for line in dump.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let p = Int(parts[0]) { result[p] = String(parts[1]) }
        }
        return result
    }

    /// `ship` to PostgreSQL, failing its socket writes (and any write on the
    /// store): the stream holds zed's first records unredacted, and the
    /// store has zed's later records and the forget to ship (batches of 3,
    /// the one that meets zed's redacted records reaching on to the forget,
    /// whose transaction also rewrites zed's first rows). After any fault:
    /// PostgreSQL holds whole transactions (every row the store's or as it
    /// was, no row past the head, a redacted row only with the redaction
    /// that authorizes it, and once the forget is there no row of zed's
    /// keeps a byte of them); the store's log is untouched and verifies; and
    /// the next `ship` completes the stream as the store's log, byte for byte.
    static let ship = FaultWorkload(name: "ship", sockets: true, prepare: { store, dir in
        let url = try Postgres.requireURL()
        let first = [ShippingSample.declare()] + ShippingSample.operations(0..<24) + ShippingForgetTests.zed(1, at: 100)
        #expect(try CLI.run(["apply", "--store", store, try dir.file("ship-1.jsonl", first)]).status == 0)
        let shipped = try CLI.run(["ship", "--store", store, "--to", url, "--stream", shipStream, "--once"])
        #expect(shipped.status == 0, "\(shipped.stderr)")
        let then = ShippingForgetTests.zed(2, at: 200) + ShippingSample.operations(24..<30) + [ShippingForgetTests.forget(at: 300)]
            + ShippingSample.operations(30..<42)
        #expect(try CLI.run(["apply", "--store", store, try dir.file("ship-2.jsonl", then)]).status == 0)
        try copyStream(shipStream, to: shipTemplate)
    }, command: { store, _ in
        try copyStream(shipTemplate, to: shipStream)
        return ["ship", "--store", store, "--to", try Postgres.requireURL(), "--stream", shipStream, "--once", "--batch", "3"]
    }, after: { store, dir, label in
        let log = rows(try Postgres.logDump(store))
        let before = rows(try Postgres.streamDump(shipTemplate))
        let stream = rows(try Postgres.streamDump(shipStream))
        let head = Int(try Postgres.psql("SELECT position FROM eventlog_streams WHERE stream = '\(shipStream)'")
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(Set(stream.keys) == Set(head >= 1 ? Array(1...head) : []), "\(label): rows \(stream.keys.sorted()) for head \(head)")
        for (position, row) in stream where row != log[position] && row != before[position] {
            Issue.record("\(label): row \(position) is neither the store's record nor the row as it was")
        }
        // The forget: the first eventlog.redaction record of the log ("eventlog.redaction" at byte 84).
        let type = Data("eventlog.redaction".utf8).map { String(format: "%02x", $0) }.joined()
        let forget = try #require(log.keys.sorted().first { log[$0]!.dropFirst(168).hasPrefix(type) })
        let redactedBy = try Postgres.psql("SELECT DISTINCT redacted_by FROM eventlog_redactions WHERE stream = '\(shipStream)'")
            .split(separator: "\n").compactMap { Int($0) }
        if head >= forget {
            #expect(redactedBy == [forget], "\(label): eventlog_redactions names \(redactedBy)")
            #expect(try Postgres.rowsContaining(ShippingForgetTests.marker, stream: shipStream) == 0, "\(label): a row keeps zed's bytes")
            for (position, row) in stream { #expect(row == log[position], "\(label): row \(position) is not the store's record") }
        } else {
            #expect(redactedBy.isEmpty, "\(label): eventlog_redactions names \(redactedBy) before the forget was shipped")
            // Flags byte (hex digits 2 and 3), bit 0: no redacted row without its redaction record.
            for (position, row) in stream where (UInt8(row.dropFirst(2).prefix(2), radix: 16) ?? 0) & 1 != 0 {
                Issue.record("\(label): row \(position) is redacted, but its redaction record (position \(forget)) is not in the stream")
            }
        }
        // The next ship completes the stream.
        let again = try CLI.run(["ship", "--store", store, "--to", try Postgres.requireURL(), "--stream", shipStream, "--once"])
        #expect(again.status == 0, "\(label): ship after the fault: \(again.stderr)")
        #expect(rows(try Postgres.streamDump(shipStream)) == log, "\(label): the stream is not the store's log after the next ship")
        #expect(try Postgres.rowsContaining(ShippingForgetTests.marker, stream: shipStream) == 0)
    })
}

enum FaultKind: CaseIterable, CustomStringConvertible {
    case ioOnce, noSpaceOnce, ioFromThenOn, noSpaceFromThenOn

    var errnoName: String { self == .ioOnce || self == .ioFromThenOn ? "EIO" : "ENOSPC" }
    var persists: Bool { self == .ioFromThenOn || self == .noSpaceFromThenOn }
    /// What the error message must say.
    var message: String { errnoName == "EIO" ? "Input/output error" : "No space left on device" }
    var description: String { "\(errnoName) \(persists ? "from then on" : "once")" }
}

enum FaultShim {
    struct Run {
        var status: Int32
        var signal: Int32?
        var timedOut: Bool
        var stderr: String
        var calls: Int
        var failedCalls: Int
        var firstFailure: String
    }

    /// Builds the shim once per test process.
    static func library() throws -> String {
        try built.get()
    }

    private static let built: Result<String, FaultShimError> = {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FaultShim/faultshim.c").path
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("faultshim-\(getpid()).so").path
        for compiler in ["cc", "gcc", "clang"] {
            let status = try? CLI.spawnAndWait("/usr/bin/env", arguments: [compiler, "-shared", "-fPIC", "-O2", "-o", output, source, "-ldl"],
                                               environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: "/dev/null")
            if status == 0 { return .success(output) }
        }
        return .failure(FaultShimError(description: "no C compiler (cc, gcc, clang) could build \(source)"))
    }()

    /// Runs `eventlog ARGS` with the shim watching files under `watching`,
    /// failing the `fault`'s call (or, `killing`, killing the process with
    /// SIGKILL just before it); kills it after a generous timeout.
    /// What a command says when its connection's socket write failed.
    static let socketMessage = "the connection to PostgreSQL closed"

    static func run(_ arguments: [String], shim: String, watching: String, excluding: String? = nil, sockets: Bool = false,
                    fault: (nth: Int, kind: FaultKind)?, killing: Bool = false, timeout: TimeInterval = 120) throws -> Run {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("faultrun-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let err = scratch.appendingPathComponent("err"), report = scratch.appendingPathComponent("report")
        try Data().write(to: err)
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "EVENTLOG_STORE")
        env["LD_PRELOAD"] = shim
        env["FAULT_PATH"] = watching + "/"
        env["FAULT_EXCLUDE"] = excluding ?? ""
        env["FAULT_REPORT"] = report.path
        env["FAULT_NTH"] = fault.map { String($0.nth) } ?? "0"
        env["FAULT_ERRNO"] = fault?.kind.errnoName ?? "EIO"
        env["FAULT_PERSIST"] = fault?.kind.persists == true ? "1" : "0"
        env["FAULT_KILL"] = killing ? "1" : "0"
        env["FAULT_SOCKETS"] = sockets ? "1" : "0"
        let process = try CLI.spawn(CLI.executable.path, arguments: arguments, environment: env,
                                    stdin: "/dev/null", stdout: "/dev/null", stderr: err.path)
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while process.isRunning {
            if Date() > deadline {
                kill(process.processIdentifier, SIGKILL)
                timedOut = true
                break
            }
            usleep(2_000)
        }
        process.waitUntilExit()
        let fields = ((try? String(contentsOf: report, encoding: .utf8)) ?? "").split(separator: " ").map(String.init)
        let signaled = process.terminationReason == .uncaughtSignal
        return Run(status: process.terminationStatus, signal: signaled && !timedOut ? process.terminationStatus : nil,
                   timedOut: timedOut, stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "",
                   calls: fields.count >= 4 ? Int(fields[1]) ?? 0 : 0,
                   failedCalls: fields.count >= 4 ? Int(fields[3]) ?? 0 : 0,
                   firstFailure: fields.count >= 7 ? "\(fields[5]) \(fields[6].trimmingCharacters(in: .whitespacesAndNewlines))" : "-")
    }

    /// Prints the sweep's figures (for Docs/Reliability.md).
    static func record(_ workload: String, calls: Int, faults: Int) {
        print("fault sweep \(workload): \(calls) writes and syncs in a clean run, \(faults) faults injected")
    }
}

struct FaultShimError: Error, CustomStringConvertible { var description: String }
