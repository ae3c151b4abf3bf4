import ActivityDomain
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `eventlog`'s command line as bytes: the input, cut at each 0x00, is
/// `eventlog`'s arguments (at most 12, each at most 1 KiB), run as a child
/// process on a copy of a small store that is its working directory's
/// default store (`./eventlog-data`).
///
/// The promises, beyond "no crash": the child ends by itself (no signal)
/// within 30 s with status 0, 1 or 64; an argument that is not UTF-8 is
/// refused before anything runs (status 64, naming it); and whatever it
/// ran, the store still verifies.
///
/// The child is built from the same package: the `eventlog` beside the
/// running binary, or `EVENTLOG_BINARY` (`Scripts/fuzz.sh` sets it). So
/// that no input reaches outside its scratch directory, a `/` in an
/// argument becomes `_`, and the commands that reach other machines or
/// run for minutes (`ship`, `follow`, `restore`, `bench…`, `demo`) become
/// `users`.
enum ArgumentsTarget {
    static let maxArguments = 12
    static let maxArgumentBytes = 1024
    static let replaced: Set<String> = ["ship", "follow", "restore", "bench", "bench-setting", "bench-queries", "demo"]

    static let executable: String? = {
        if let path = ProcessInfo.processInfo.environment["EVENTLOG_BINARY"] { return path }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("eventlog").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()

    /// A small store (`FuzzStores.searchableLines`) to copy for each input.
    static let fixture = Fixture { () -> String in
        let path = Scratch.path("arguments-fixture")
        _ = try ActivityStore(path: path, options: FuzzStores.fast).filled(with: FuzzStores.searchableLines)
        return path
    }

    /// The input as arguments: cut at 0x00, bounded, `/` made `_`.
    static func arguments(_ input: [UInt8]) -> [[UInt8]] {
        var arguments = input.split(separator: 0, maxSplits: maxArguments - 1, omittingEmptySubsequences: false)
            .prefix(maxArguments).map { Array($0.prefix(maxArgumentBytes)).map { $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 } }
        if let first = arguments.first, replaced.contains(String(decoding: first, as: UTF8.self)) { arguments[0] = Array("users".utf8) }
        // `--wait S` waits as long as it is asked (up to a day) for a position
        // no process may write: its value is made 0, so a wait is not a hang.
        for index in arguments.indices where arguments[index].starts(with: Array("--wait".utf8)) {
            if arguments[index].count == 6, index + 1 < arguments.count { arguments[index + 1] = Array("0".utf8) }
            if arguments[index].starts(with: Array("--wait=".utf8)) { arguments[index] = Array("--wait=0".utf8) }
        }
        return arguments
    }

    static func run(_ input: [UInt8]) throws {
        guard let executable else { throw FuzzFailure("no eventlog binary beside this one; set EVENTLOG_BINARY") }
        let work = Scratch.path("arguments-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        try FileManager.default.copyItem(atPath: try fixture.get(), toPath: work + "/eventlog-data")
        let arguments = Self.arguments(input)
        let (status, signal, errors) = try Self.spawn(executable, arguments, in: work, timeout: 30)
        let shown = arguments.map { String(decoding: $0, as: UTF8.self).debugDescription }.joined(separator: " ")
        if let signal { throw FuzzFailure("eventlog \(shown): ended by signal \(signal)\(signal == SIGKILL ? " (no exit within 30 s)" : ""): \(errors.prefix(500))") }
        guard [0, 1, 64].contains(status) else { throw FuzzFailure("eventlog \(shown): exit status \(status): \(errors.prefix(500))") }
        if arguments.contains(where: { String(validating: $0, as: UTF8.self) == nil }) {
            guard status == 64, errors.contains("is not valid UTF-8") else {
                throw FuzzFailure("eventlog \(shown): an argument that is not UTF-8 was not refused (status \(status)): \(errors.prefix(500))")
            }
        }
        let (verified, _, verifyErrors) = try Self.spawn(executable, [Array("verify".utf8)], in: work, timeout: 30)
        if verified != 0 && FileManager.default.fileExists(atPath: work + "/eventlog-data/data.mdb") {
            throw FuzzFailure("eventlog \(shown) left a store that does not verify: \(verifyErrors.prefix(500))")
        }
    }

    /// Runs `executable ARGS` in `directory` (`env --chdir`), standard input
    /// empty; its status or signal, and standard error; SIGKILL after `timeout`.
    static func spawn(_ executable: String, _ arguments: [[UInt8]], in directory: String,
                      timeout: Double) throws -> (status: Int32, signal: Int32?, errors: String) {
        let errorsPath = directory + "/stderr"
        _ = FileManager.default.createFile(atPath: errorsPath, contents: nil)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errorsPath, O_WRONLY | O_TRUNC, 0)
        let all = [Array("/usr/bin/env".utf8), Array("--chdir=\(directory)".utf8), Array("--unset=EVENTLOG_STORE".utf8),
                   Array("--".utf8), Array("SWIFT_BACKTRACE=enable=no".utf8), Array(executable.utf8)] + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = all.map { bytes in
            (bytes + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { strdup($0.baseAddress!) } }
        } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/usr/bin/env", &actions, nil, &argv, environ)
        guard spawned == 0 else { throw FuzzFailure("posix_spawn: \(String(cString: strerror(spawned)))") }
        let deadline = Date().addingTimeInterval(timeout)
        var raw: Int32 = 0
        while true {
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid { break }
            if result < 0 && errno != EINTR { break }
            if Date() > deadline { kill(pid, SIGKILL) }
            usleep(2_000)
        }
        let errors = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: errorsPath))) ?? Data(), as: UTF8.self)
        let signaled = raw & 0x7F != 0
        return (signaled ? 0 : (raw >> 8) & 0xFF, signaled ? raw & 0x7F : nil, errors)
    }

    /// Command lines to start a corpus from: names as bytes, bad bytes, limits.
    static let examples: [[String]] = [
        ["items", "--user", "jos\u{e9}", "--json"],
        ["log", "--user", "jose\u{301}", "--json"],
        ["users", "--json"],
        ["verify"],
        ["replay", "--verify"],
        ["search", "latte", "--now", "2026-02-30T00:00:00Z"],
        ["query", #"((title == "latte*"c))"#],
        ["forget", "--user", "\u{2126}"],
        ["current", "--device", String(repeating: "d", count: 300)],
        ["items", "--user", String(repeating: "u", count: 257)],
        ["apply", "-"],
        ["client-state", "--index", "caf\u{e9}"],
        ["stats", "--json"],
        ["snapshot", "create"],
        ["search", "latte", "--after", "18446744073709551615", "--wait", "0"],
        ["query", #"title == "latte""#, "--after", "1", "--wait", "nan"],
        ["search", "latte", "--wait", "5"],
    ]

    static func seeds() -> [[UInt8]] {
        examples.map { Array($0.joined(separator: "\u{0}").utf8) } + [
            Array("items\u{0}--user\u{0}".utf8) + [0xFF],
            Array("forget\u{0}--user=".utf8) + [0xC3],
            Array("log\u{0}--store\u{0}x".utf8) + [0x80],
        ]
    }
}
