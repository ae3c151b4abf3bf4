import Foundation
import Testing

/// Runs the built `eventlog` as a separate process, as an operator would.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// stdout parsed as one JSON document.
    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
    }

    /// stdout as a JSON array of objects.
    func objects() throws -> [[String: Any]] {
        try #require(try json() as? [[String: Any]], "not a JSON array of objects: \(stdout)")
    }

    /// stdout as one JSON object.
    func object() throws -> [String: Any] {
        try #require(try json() as? [String: Any], "not a JSON object: \(stdout)")
    }
}

enum CLI {
    /// The `eventlog` executable beside the test bundle (SwiftPM builds
    /// every product of the package into the same directory).
    static let executable: URL = {
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("eventlog")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL.appendingPathComponent("eventlog")
    }()

    /// Runs `eventlog ARGS`, with `input` on standard input. Output goes to
    /// files rather than pipes so that a large output cannot block the child.
    /// Another executable built beside `eventlog` (`SyntheticAppender`).
    static func product(_ name: String) -> URL {
        executable.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Runs `eventlog ARGS` through `wrapper` (e.g. `setpriv … eventlog ARGS`).
    @discardableResult
    static func run(_ arguments: [String], through wrapper: [String]) throws -> CLIResult {
        try run(arguments, executable: URL(fileURLWithPath: wrapper[0]), prefix: Array(wrapper.dropFirst()) + [executable.path])
    }

    @discardableResult
    static func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:],
                    executable: URL = CLI.executable, prefix: [String] = []) throws -> CLIResult {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("eventlog-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("out"), err = scratch.appendingPathComponent("err")
        let inFile = scratch.appendingPathComponent("in")
        try Data().write(to: out)
        try Data().write(to: err)
        try Data((input ?? "").utf8).write(to: inFile)

        let process = Process()
        process.executableURL = executable
        process.arguments = prefix + arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "EVENTLOG_STORE")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let stdoutHandle = try FileHandle(forWritingTo: out)
        let stderrHandle = try FileHandle(forWritingTo: err)
        let stdinHandle = try FileHandle(forReadingFrom: inFile)
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        process.standardInput = stdinHandle
        try process.run()
        process.waitUntilExit()
        try stdoutHandle.close()
        try stderrHandle.close()
        try stdinHandle.close()
        return CLIResult(status: process.terminationStatus,
                         stdout: try String(contentsOf: out, encoding: .utf8),
                         stderr: try String(contentsOf: err, encoding: .utf8))
    }
}

/// A directory under the system's temporary folder, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("eventlog-cli-test-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Writes `lines` as a JSON Lines file and returns its path.
    func file(_ name: String, _ lines: [String]) throws -> String {
        let path = sub(name)
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// Compares JSON values parsed from two outputs, by their canonical form.
func jsonEqual(_ a: Any, _ b: Any) -> Bool {
    let options: JSONSerialization.WritingOptions = [.sortedKeys, .fragmentsAllowed]
    guard let x = try? JSONSerialization.data(withJSONObject: a, options: options),
          let y = try? JSONSerialization.data(withJSONObject: b, options: options) else { return false }
    return x == y
}

/// A child process that holds the store open and prints `holding` once it
/// does; its standard output is read until a marker.
final class Holder {
    let process = Process()
    private let output = Pipe()

    init(_ command: [String]) throws {
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func waitFor(_ marker: String) -> String {
        var text = ""
        while !text.contains(marker) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text
    }
}
