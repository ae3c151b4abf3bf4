import Foundation

/// Runs an executable of this package (`SyntheticAppender`), built beside the test bundle.
struct ChildProcess {
    let process = Process()
    let output = Pipe()
    /// Standard error, when captured (else discarded).
    let errors = Pipe()

    /// `through`: a command that runs the product (`setpriv --reuid=nobody …`).
    init(_ product: String, _ arguments: [String], capturingErrors: Bool = false, through wrapper: [String] = []) throws {
        let path = Bundle.main.bundleURL.appendingPathComponent(product)
        process.executableURL = wrapper.first.map { URL(fileURLWithPath: $0) } ?? path
        process.arguments = wrapper.isEmpty ? arguments : Array(wrapper.dropFirst()) + [path.path] + arguments
        process.standardOutput = output
        process.standardError = capturingErrors ? errors : FileHandle.nullDevice
        // A trap prints its message without the backtracer's second of symbolication.
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        try process.run()
    }

    /// Reads stdout up to a line that contains `marker`; what was read.
    func waitFor(_ marker: String) throws -> String {
        var text = ""
        let handle = output.fileHandleForReading
        // availableData returns what the pipe holds; read(upToCount:) would wait for the whole count.
        while !text.contains(marker) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text
    }

    /// Waits for exit; returns how it ended and what it wrote to stderr (with `capturingErrors`).
    func finishWithErrors() -> (reason: Process.TerminationReason, status: Int32, errors: String) {
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        _ = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationReason, process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Waits for exit; returns the exit status and what it printed.
    func finish() -> (status: Int32, output: String) {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func kill() { Foundation.kill(process.processIdentifier, SIGKILL) }
}
