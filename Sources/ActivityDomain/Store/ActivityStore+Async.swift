import EventLog
import Foundation

/// The async calls of the ``ActivityStore`` itself, beside those of every
/// space (``UserScoped``: `read { }`, `write { }`, `write(_:)`).
///
/// ```swift
/// try await store.declareActivityTypes(["com.example.app.viewOrder"])
/// let users = try await store.users()
/// ```
extension ActivityStore {
    /// ``write(_:at:options:)-([ActivityCommand.Timed],_,_)``, with the task
    /// suspended (no thread held) until the write is committed or rejected.
    @discardableResult
    public func write(_ commands: [ActivityCommand.Timed], at time: Date? = nil,
                      options: WriteOptions = WriteOptions()) async throws -> [CommandResult] {
        try Self.checkTransaction(commands)
        let views = self.views
        return Self.results(of: try await eventStore.write(Self.options(options, at: time)) { batch in
            try ActivityCommandExecutor.execute(commands, views: views, in: batch)
        })
    }

    /// ``declareActivityTypes(_:at:)``, with the task suspended until it is committed.
    @discardableResult
    public func declareActivityTypes(_ types: [String], at time: Date? = nil) async throws -> CommandResult {
        try await write([ActivityCommand.Timed(.declareActivityTypes(types))], at: time)[0]
    }

    /// ``users()``, off the cooperative threads.
    public func users() async throws -> [UserSummary] {
        try await BlockingWork.run { try self.users() }
    }
}
