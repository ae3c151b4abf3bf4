/// An environment that is in use where the operation needs it alone: a
/// compaction refused because another process has the environment open,
/// or an open refused because a compaction is under way.
///
/// ```swift
/// do { try Environment.compact(path: dir, beforeSwap: { _, _ in }) }
/// catch let error as EnvironmentBusyError { print(error) }   // "… is open in another process (pid 4711) …"
/// ```
public struct EnvironmentBusyError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// A compaction holds the environment (its directory's exclusive lock).
        case compacting
        /// Another process has the environment open; its pid when known
        /// (0: the kernel did not say).
        case openElsewhere(pid: Int32?)
    }

    /// The environment's directory.
    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .compacting:
            return "the store at \(path) is being compacted by another process; open it once the compaction has finished"
        case .openElsewhere(let pid):
            let who = pid.map { $0 > 0 ? "another process (pid \($0))" : "another process" } ?? "another process"
            return "the store at \(path) is open in \(who); compaction needs it alone: "
                + "stop every process that has it open, writers and readers (services, followers, `eventlog` commands), and compact again"
        }
    }
}
