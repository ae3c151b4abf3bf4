import EventLog
import Foundation
import LMDB
import SyntheticWorkload
import Testing

/// Many processes on one store at once, through `SyntheticAppender`: four
/// writers (two durable, two not; one with large events), four readers that
/// check every read is a consistent prefix, and a loop each of `replay
/// --verify`, snapshot creation and `verify`, all starting from a small map
/// so that it grows under them; and a fifth writer killed with SIGKILL at
/// random moments and restarted. 60 seconds by default;
/// `EVENTLOG_TORTURE_SECONDS` sets another bound (e.g. 1800 by hand).
@Suite("Concurrency torture", .serialized)
struct TortureTests {
    @Test("4 writers, 4 readers, replay --verify, snapshots and verify in a loop: no error, no lost or duplicated position")
    func torture() throws {
        let seconds = ProcessInfo.processInfo.environment["EVENTLOG_TORTURE_SECONDS"].flatMap(Double.init) ?? 60
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let batchSize = 5
        let store = ["--store", dir.path, "--map-size", "\(1 << 20)"]
        let time = ["--seconds", "\(seconds)"]
        var children: [(name: String, process: LoggedProcess)] = []
        for writer in 1...4 {
            children.append(("writer \(writer)", try LoggedProcess("SyntheticAppender", ["append"] + store + time + [
                "--writer", "\(writer)", "--batches", "100000000", "--batch-size", "\(batchSize)",
                "--durability", writer <= 2 ? "durable" : "noSync", "--payload-bytes", writer == 4 ? "5000" : "300",
            ])))
        }
        for reader in 1...4 {
            children.append(("reader \(reader)", try LoggedProcess("SyntheticAppender", ["read"] + store + time + ["--batch-size", "\(batchSize)"])))
        }
        children.append(("replay --verify", try LoggedProcess("SyntheticAppender", ["verify-views"] + store + time)))
        children.append(("snapshot", try LoggedProcess("SyntheticAppender", ["snapshot"] + store + time)))
        children.append(("verify", try LoggedProcess("SyntheticAppender", ["verify"] + store + time)))

        // Meanwhile a fifth writer is killed with SIGKILL at random moments
        // and started again: it resumes after its last whole batch.
        let end = Date().addingTimeInterval(seconds)
        var kills = 0, killedWriterAcknowledged = 0
        var generator = SystemRandomNumberGenerator()
        while Date().addingTimeInterval(1) < end {
            let victim = try LoggedProcess("SyntheticAppender", ["append"] + store + [
                "--writer", "5", "--batches", "100000000", "--batch-size", "\(batchSize)", "--durability", "durable",
            ])
            usleep(UInt32.random(in: 100_000...900_000, using: &generator))
            victim.kill()
            let (_, output, _) = victim.finish(by: Date().addingTimeInterval(60))
            killedWriterAcknowledged += output.split(separator: "\n").filter { $0.hasPrefix("committed") }.count * batchSize
            kills += 1
        }

        // Generous: a loop ends its last round after the bound.
        let deadline = Date().addingTimeInterval(seconds + 300)
        var acknowledged = 0
        for (name, child) in children {
            let (status, output, timedOut) = child.finish(by: deadline)
            #expect(!timedOut, "\(name) did not stop: \(output.suffix(500))")
            #expect(status == 0, "\(name) failed: \(output.suffix(500))")
            if name.hasPrefix("writer") {
                let commits = output.split(separator: "\n").filter { $0.hasPrefix("committed") }.count
                #expect(commits > 0, "\(name) never committed")
                acknowledged += commits * batchSize
            } else {
                print("torture \(name): \(output.split(separator: "\n").last ?? "")")
            }
        }

        let events = try EventStore<SyntheticViews>(path: dir.path, options: fastOptions())
        // Every acknowledged event is there; beyond them, at most the batch
        // each killed writer committed but had not yet printed.
        let head = try events.head()
        let floor = acknowledged + killedWriterAcknowledged
        #expect(head >= Position(floor) && head <= Position(floor + kills * batchSize),
                "head \(head); acknowledged \(floor), \(kills) kills")
        let killedWriterEvents = try events.read { try events.views.progress.counts.get(5, in: $0) } ?? 0
        #expect(killedWriterEvents + Position(acknowledged) == head, "the four writers' events and the killed writer's add up to the head")
        #expect(try ConsistentPrefix.check(events, batchSize: batchSize) == nil)
        let report = try events.verify()
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        #expect(try events.verifyViews().difference == nil)
        print("torture: \(head) events in \(seconds) s, \(kills) writer kills, map \(events.environment.info().mapSize) bytes")
    }
}

/// A child process whose output goes to a file (a pipe would fill and stop a
/// chatty writer), with a deadline.
final class LoggedProcess {
    let process = Process()
    let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("torture-\(UUID().uuidString)").path

    init(_ product: String, _ arguments: [String]) throws {
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.executableURL = Bundle.main.bundleURL.appendingPathComponent(product)
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try handle.close()
    }

    func kill() { Foundation.kill(process.processIdentifier, SIGKILL) }

    /// Waits for exit until `deadline`, then kills it.
    func finish(by deadline: Date) -> (status: Int32, output: String, timedOut: Bool) {
        var timedOut = false
        while process.isRunning {
            if Date() > deadline {
                Foundation.kill(process.processIdentifier, SIGKILL)
                timedOut = true
                break
            }
            usleep(20_000)
        }
        process.waitUntilExit()
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: outputPath)
        return (process.terminationStatus, output, timedOut)
    }
}
