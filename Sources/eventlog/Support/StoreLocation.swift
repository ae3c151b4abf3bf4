import ActivityDomain
import ArgumentParser
import EventLog
import Foundation
import Logging

/// `--store DIR`, shared by every subcommand, and how a command opens it.
struct StoreLocation: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The store directory.", discussion: "Default: $EVENTLOG_STORE, else ./eventlog-data.", valueName: "dir"))
    var store: String?

    /// The directory the command works on.
    var path: String {
        if let store { return store }
        if let env = ProcessInfo.processInfo.environment["EVENTLOG_STORE"], !env.isEmpty { return env }
        return "./eventlog-data"
    }

    /// Opens an existing store; a missing one is an error naming the path
    /// (a read command must not create an empty store where a typo pointed).
    func openExisting() throws -> ActivityStore {
        try Self.open(path, create: false)
    }

    /// Opens the store, creating it when missing (`apply`, `demo`).
    func openOrCreate() throws -> ActivityStore {
        try Self.open(path, create: true)
    }

    static func open(_ path: String, create: Bool) throws -> ActivityStore {
        var options = ActivityStoreOptions()
        options.store.createIfMissing = create
        // The engine's notices (a projection rebuilt on open…) go to stderr,
        // never into the JSON on stdout.
        var logger = Logger(label: "eventlog") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .notice
        options.store.logger = logger
        return try ActivityStore(path: path, options: options)
    }
}
