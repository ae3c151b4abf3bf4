import Foundation
import Testing

/// An `eventlog apply` that stays open as a writer: one line, one
/// transaction, fed through a FIFO, so that a test can damage the store
/// between two of its writes.
///
/// ```swift
/// let slow = try SlowWriter(store: store, in: dir)
/// slow.send(#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"a"}]}"#)
/// let (status, stderr) = slow.finish()
/// ```
struct SlowWriter {
    let process: SpawnedProcess
    let feed: Int32
    let errors: String

    /// What it prints on stdout.
    let output: String

    init(store: String, in dir: TemporaryDirectory, extra: [String] = []) throws {
        let fifo = dir.sub("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // Opened for reading and writing first (which does not wait for a
        // reader), so that the child's open of it for reading does not wait either.
        feed = open(fifo, O_RDWR)
        errors = dir.sub("slow.err")
        for output in ["slow.out", "slow.err"] { try Data().write(to: URL(fileURLWithPath: dir.sub(output))) }
        output = dir.sub("slow.out")
        process = try CLI.spawn(CLI.executable.path, arguments: ["apply", "--store", store, "--transaction-size", "1", "--pipeline", "0"] + extra + ["-"],
                                environment: ProcessInfo.processInfo.environment, stdin: fifo, stdout: output, stderr: errors)
    }

    /// Writes one operation line to the writer's input.
    func send(_ line: String) {
        _ = (line + "\n").withCString { write(feed, $0, strlen($0)) }
    }

    /// Ends its input, waits for it to exit: its status and what it printed on stderr.
    func finish() -> (status: Int32, stderr: String) {
        close(feed)
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }
}
