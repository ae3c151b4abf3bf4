import Foundation
import Testing

// Running `eventlog` and other executables built beside the test bundle.
// Also compiled into Tools/Tests/EventLogCLIProcessTests (a symbolic link to
// this file), whose tests run `SyntheticAppender` beside `eventlog`.

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

        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "EVENTLOG_STORE")
        for (key, value) in environment { env[key] = value }
        let status = try spawnAndWait(executable.path, arguments: prefix + arguments, environment: env,
                                      stdin: inFile.path, stdout: out.path, stderr: err.path)
        return CLIResult(status: status,
                         stdout: try String(contentsOf: out, encoding: .utf8),
                         stderr: try String(contentsOf: err, encoding: .utf8))
    }

    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Runs `path` with its standard input, output and error on these
    /// files and waits for it (`posix_spawn`, then `waitpid`): its exit
    /// status, or the signal that ended it, as `Process.terminationStatus`
    /// gives. Not Foundation's `Process`: its `waitUntilExit` was seen to
    /// miss a child's exit under load and wait forever beside a zombie
    /// (the fault sweep, hundreds of runs; see ShippingSupport too).
    static func spawnAndWait(_ path: String, arguments: [String], environment: [String: String],
                             stdin: String?, stdout: String?, stderr: String?) throws -> Int32 {
        let child = try spawn(path, arguments: arguments, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr)
        child.waitUntilExit()
        return child.terminationStatus
    }

    /// Starts `path` (`posix_spawn`) with its standard input, output and
    /// error on these files (nil shares the test process's), or its
    /// standard output or error on a descriptor of this process (a pipe's
    /// write end, a log file both share).
    static func spawn(_ path: String, arguments: [String], environment: [String: String],
                      stdin: String?, stdout: String?, stderr: String?,
                      stdoutDescriptor: Int32? = nil, stderrDescriptor: Int32? = nil) throws -> SpawnedProcess {
        try spawn(path, byteArguments: arguments.map { Array($0.utf8) }, environment: environment, stdin: stdin, stdout: stdout,
                  stderr: stderr, stdoutDescriptor: stdoutDescriptor, stderrDescriptor: stderrDescriptor)
    }

    /// ``spawn(_:arguments:environment:stdin:stdout:stderr:stdoutDescriptor:stderrDescriptor:)``
    /// with each argument as bytes, which need not be UTF-8 (a `String`
    /// cannot hold `0xFF`).
    static func spawn(_ path: String, byteArguments arguments: [[UInt8]], environment: [String: String],
                      stdin: String?, stdout: String?, stderr: String?,
                      stdoutDescriptor: Int32? = nil, stderrDescriptor: Int32? = nil) throws -> SpawnedProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // A file given replaces the test process's; nil shares it.
        if let stdin { posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0) }
        if let stdout { posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_TRUNC, 0) }
        if let stdoutDescriptor { posix_spawn_file_actions_adddup2(&actions, stdoutDescriptor, 1) }
        if let stderr { posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_TRUNC, 0) }
        if let stderrDescriptor { posix_spawn_file_actions_adddup2(&actions, stderrDescriptor, 2) }
        // Nothing else: tests running beside this one open descriptors
        // without `O_CLOEXEC` (pipes), and a child that inherited a varying
        // set would start with a varying count (the descriptor-limit sweep
        // of `CompactionCrashTests` counts on a fixed one).
        // (glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, which
        // the Glibc module does not export: looked up by name.)
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        var argv: [UnsafeMutablePointer<CChar>?] = ([Array(path.utf8)] + arguments).map { bytes in
            (bytes + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { strdup($0.baseAddress!) } }
        } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        // As Foundation's Process does: the child starts with no signal blocked
        // and every signal at its default, whatever the calling thread had.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, &argv, &envp)
        guard spawned == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "posix_spawn of \(path) failed: \(String(cString: strerror(spawned)))"])
        }
        return SpawnedProcess(pid)
    }
}

/// How a bounded run of `eventlog` ended (``CLI/runBounded(_:input:environment:timeout:)``).
struct BoundedRun: CustomStringConvertible {
    var status: Int32
    /// The signal that ended it, if one did (never SIGKILL of the timeout).
    var signal: Int32?
    var timedOut: Bool
    var stdout: String
    var stderr: String
    /// The child's peak resident memory, in bytes: `VmHWM` of
    /// `/proc/PID/status`, read while it runs. (Not `wait4`'s `ru_maxrss`:
    /// a child started by `posix_spawn` shares this process's memory until
    /// its `exec`, which then counts as the child's peak.)
    var peakMemory: Int

    /// Exited by itself, with a status (no signal, no timeout).
    var exited: Bool { signal == nil && !timedOut }

    var description: String {
        "status \(status)\(signal.map { ", signal \($0)" } ?? "")\(timedOut ? ", timed out" : ""): \(stderr.prefix(400))"
    }
}

extension CLI {
    /// Runs `eventlog ARGS` (each argument's bytes as given, UTF-8 or not)
    /// with `input` (a file's path, or nil for none) on standard input and
    /// kills it after `timeout`: how a command ended, and its peak memory.
    static func runBounded(_ arguments: [[UInt8]], input: String? = nil, environment: [String: String] = [:],
                           timeout: TimeInterval = 60) throws -> BoundedRun {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("eventlog-bounded-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("out"), err = scratch.appendingPathComponent("err")
        try Data().write(to: out)
        try Data().write(to: err)
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "EVENTLOG_STORE")
        for (key, value) in environment { env[key] = value }
        let child = try spawn(executable.path, byteArguments: arguments, environment: env, stdin: input ?? "/dev/null",
                              stdout: out.path, stderr: err.path)
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        var raw: Int32 = 0
        var peak = 0
        while true {
            peak = max(peak, Self.peakMemory(of: child.processIdentifier))
            let result = waitpid(child.processIdentifier, &raw, WNOHANG)
            if result == child.processIdentifier { break }
            if result < 0 && errno != EINTR { break }
            if !timedOut && Date() > deadline {
                kill(child.processIdentifier, SIGKILL)
                timedOut = true
            }
            usleep(2_000)
        }
        let signaled = raw & 0x7F != 0
        return BoundedRun(status: signaled ? raw & 0x7F : (raw >> 8) & 0xFF, signal: signaled && !timedOut ? raw & 0x7F : nil,
                          timedOut: timedOut,
                          stdout: String(decoding: (try? Data(contentsOf: out)) ?? Data(), as: UTF8.self),
                          stderr: String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self),
                          peakMemory: peak)
    }

    /// `VmHWM` of `/proc/PID/status` in bytes (0 once the process is gone).
    static func peakMemory(of pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return (Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0) * 1024
    }

    /// ``runBounded(_:input:environment:timeout:)`` with UTF-8 arguments.
    static func runBounded(_ arguments: [String], input: String? = nil, environment: [String: String] = [:],
                           timeout: TimeInterval = 60) throws -> BoundedRun {
        try runBounded(arguments.map { Array($0.utf8) }, input: input, environment: environment, timeout: timeout)
    }
}

/// A child started by ``CLI/spawn(_:arguments:environment:stdin:stdout:stderr:stdoutDescriptor:stderrDescriptor:)``,
/// with the part of Foundation's `Process` the tests use (`isRunning`,
/// `processIdentifier`, `waitUntilExit`, `terminationStatus`,
/// `terminationReason`), on `waitpid`: nothing but these calls reaps it.
final class SpawnedProcess {
    let processIdentifier: pid_t
    /// `waitpid`'s status, once reaped.
    private var status: Int32?

    init(_ pid: pid_t) { processIdentifier = pid }

    /// Whether it has not ended (`waitpid` with `WNOHANG`, which reaps it
    /// when it has).
    var isRunning: Bool {
        if status != nil { return false }
        var raw: Int32 = 0
        while true {
            let result = waitpid(processIdentifier, &raw, WNOHANG)
            if result == processIdentifier { status = raw; return false }
            if result == 0 { return true }
            if errno != EINTR { status = 0; return false }   // ECHILD: not ours to wait for
        }
    }

    /// Waits until it ends (`waitpid`, again after `EINTR`).
    func waitUntilExit() {
        var raw: Int32 = 0
        while status == nil {
            if waitpid(processIdentifier, &raw, 0) == processIdentifier { status = raw } else if errno != EINTR { status = 0 }
        }
    }

    /// The exit status, or the signal that ended it (see ``terminationReason``).
    var terminationStatus: Int32 {
        let raw = status ?? 0
        return raw & 0x7F == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
    }

    var terminationReason: Process.TerminationReason {
        (status ?? 0) & 0x7F == 0 ? .exit : .uncaughtSignal
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
    let process: SpawnedProcess
    private let output: FileHandle

    init(_ command: [String]) throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw CocoaError(.fileWriteUnknown) }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        output = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        defer { close(ends[1]) }
        process = try CLI.spawn(command[0], arguments: Array(command.dropFirst()), environment: ProcessInfo.processInfo.environment,
                                stdin: nil, stdout: nil, stderr: "/dev/null", stdoutDescriptor: ends[1])
    }

    func waitFor(_ marker: String) -> String {
        var text = ""
        while !text.contains(marker) {
            let chunk = output.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text
    }
}
