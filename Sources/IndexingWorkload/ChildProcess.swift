import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` and reaped with `waitpid`: the
/// benchmark's `gzip -dc` of a corpus and its `bench-setting` children.
///
/// Not Foundation's `Process`: on this Linux its `waitUntilExit` was seen to
/// miss a child's exit and wait forever beside a zombie (a test hung so; the
/// tests' `CLI.spawnAndWait` moved to `posix_spawn` for the same reason).
/// Here the exit is the `waitpid` of the caller's own thread, retried after
/// `EINTR`, and nothing else reaps the child.
///
/// As Foundation's `Process` does, the child starts with no signal blocked
/// and every signal at its default (`POSIX_SPAWN_SETSIGMASK`,
/// `POSIX_SPAWN_SETSIGDEF`), whatever the spawning thread had: a Dispatch
/// thread blocks SIGTERM and SIGPIPE, which a child would inherit. It gets
/// this process's environment, and no descriptor of this process but its
/// three standard streams (every descriptor this package opens is
/// close-on-exec).
///
/// ```swift
/// let gzip = try ChildProcess("/bin/gzip", ["-dc", path], standardOutput: .pipe)
/// let text = try gzip.output!.readToEnd()
/// let end = try gzip.wait()   // .exited(0), .exited(1), .signalled(SIGKILL)
/// ```
///
/// A child neither waited for nor ended when this object goes is killed
/// (SIGKILL) and reaped, so that it neither outlives its reader blocked on a
/// full pipe nor stays a zombie.
public final class ChildProcess {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// This process's own.
        case inherited
        /// `/dev/null`.
        case null
        /// A file: read for standard input; otherwise written, from empty.
        case file(String)
        /// A pipe to this process, which ``output`` or ``errors`` reads: for
        /// standard output and error only.
        case pipe
    }

    /// How a child ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        public var succeeded: Bool { self == .exited(0) }

        /// "exited with status 1", "was killed by signal 9 (Killed)".
        public var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "was killed by signal \(signal) (\(String(cString: strsignal(signal))))"
            }
        }
    }

    /// The child's process id.
    public let pid: pid_t
    /// The executable and its arguments, for messages: `gzip -dc items.jsonl.gz`.
    public let command: String
    /// The read end of the child's standard output, with ``Stream/pipe``.
    public let output: FileHandle?
    /// The read end of the child's standard error, with ``Stream/pipe``.
    public let errors: FileHandle?
    private var termination: Termination?

    /// Starts `executable` (a path: no `PATH` search) with `arguments`
    /// (`posix_spawn`; a pipe is `pipe` made close-on-exec with `fcntl`,
    /// handed to the child by `posix_spawn_file_actions_adddup2`).
    public init(_ executable: String, _ arguments: [String], standardInput: Stream = .null,
                standardOutput: Stream = .inherited, standardError: Stream = .inherited) throws {
        command = ([(executable as NSString).lastPathComponent] + arguments).joined(separator: " ")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Both ends of each pipe: the child's ends close here after the
        // spawn, this process's ends on a failure.
        var childEnds: [Int32] = []
        var readEnds: [Int32: Int32] = [:]
        defer { for fd in childEnds { close(fd) } }
        func fail(_ message: String) -> WorkloadError {
            for fd in readEnds.values { close(fd) }
            return WorkloadError(message)
        }
        for (target, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            switch stream {
            case .inherited:
                break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .pipe where target == 0:
                throw fail("\(command): a pipe to standard input is not supported")
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else {
                    throw fail("pipe for \(command): \(String(cString: strerror(errno)))")
                }
                // Close-on-exec at once (Glibc does not export `pipe2`): a
                // child spawned by another thread inbetween would hold the
                // write end, and the reader would see no end of file while
                // it lives. This package's spawns are not concurrent.
                _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
                readEnds[target] = ends[0]
                childEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, &argv, &envp)
        guard spawned == 0 else {
            throw fail("posix_spawn(\(executable)) for \(command): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        output = readEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        errors = readEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    deinit {
        if termination == nil {
            Glibc.kill(pid, SIGKILL)
            _ = try? wait()
        }
    }

    /// Waits until the child ends (`waitpid`, again after `EINTR`) and says
    /// how; after the first call, the same answer at once.
    @discardableResult
    public func wait() throws -> Termination {
        if let termination { return termination }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else {
                throw WorkloadError("waitpid(\(pid)) for \(command): \(String(cString: strerror(errno)))")
            }
        }
        let signal = status & 0x7F
        let ended: Termination = signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
        termination = ended
        return ended
    }

    /// Sends `signal` to the child (`kill`), unless it was already reaped
    /// (its process id may then be another process's).
    public func signal(_ signal: Int32) {
        if termination == nil { Glibc.kill(pid, signal) }
    }
}
