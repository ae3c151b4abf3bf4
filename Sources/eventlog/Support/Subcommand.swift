import ArgumentParser
import EventLog
import Foundation

/// A subcommand whose failures all end the same way: one message on stderr
/// that starts with the subcommand (`eventlog current: open: no store at …`)
/// and a non-zero exit. The library's errors already name the operation,
/// the field or value and what is allowed (SPEC §8).
protocol Subcommand: ParsableCommand {
    func execute() throws
}

extension Subcommand {
    func run() throws {
        do {
            try Self.refuseRepeatedOptions(self)
            try execute()
        } catch let exit as ExitCode {
            throw exit
        } catch let error as EventLogError where error.code == .viewsStale {
            Output.error("eventlog \(Self.configuration.commandName ?? ""): \(error)\n"
                + "`eventlog replay` rebuilds the views; --allow-lagging-views reads views that only lag, as they stand")
            throw ExitCode.failure
        } catch {
            Output.error("eventlog \(Self.configuration.commandName ?? ""): \(error)")
            throw ExitCode.failure
        }
    }
}

extension ParsableCommand {
    /// A repeated single-valued option (``RepeatedOptions``): a usage error
    /// (exit 64), said before anything runs.
    static func refuseRepeatedOptions(_ command: Any) throws {
        do {
            try RepeatedOptions.check(command, arguments: RawArguments.current.dropFirst().map { String(decoding: $0, as: UTF8.self) })
        } catch let error as CLIError {
            Output.error("eventlog \(configuration.commandName ?? ""): \(error)")
            throw ExitCode.validationFailure
        }
    }
}

/// An error of the command line itself (an argument the library never sees).
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// ``Subcommand`` for commands that run async work (shipping, following).
protocol AsyncSubcommand: AsyncParsableCommand {
    func execute() async throws
}

extension AsyncSubcommand {
    func run() async throws {
        do {
            try Self.refuseRepeatedOptions(self)
            try await execute()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            Output.error("eventlog \(Self.configuration.commandName ?? ""): \(error)")
            throw ExitCode.failure
        }
    }
}
