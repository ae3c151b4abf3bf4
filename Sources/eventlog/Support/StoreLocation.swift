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

    @Flag(name: .long, help: ArgumentHelp(
        "Read views that lag the log as they stand.",
        discussion: "Read commands only. Without it, a read of views that lag the log fails and says how far behind they are; with it, they answer as of the position they applied through, and a warning on stderr says so. Views built by another projection version are refused either way: `eventlog replay` rebuilds them."))
    var allowLaggingViews = false

    /// `--store ""` names no directory (it would be the working directory): a usage error.
    func validate() throws {
        if store == "" {
            throw ValidationError("--store is empty; give the store's directory (or leave --store out: $EVENTLOG_STORE, else ./eventlog-data)")
        }
    }

    /// The directory the command works on.
    var path: String {
        if let store { return store }
        if let env = ProcessInfo.processInfo.environment["EVENTLOG_STORE"], !env.isEmpty { return env }
        return "./eventlog-data"
    }

    /// Opens an existing store for a command that writes; a missing one is
    /// an error naming the path.
    func openExisting(adjusting adjust: (inout StoreOptions) -> Void = { _ in }) throws -> ActivityStore {
        try Self.open(path, create: false, adjusting: adjust)
    }

    /// Opens an existing store read-only, for a command that only reads
    /// (SPEC §2 "Reading never writes"): no write transaction, so it never
    /// waits for a writer and works on a read-only directory; no catch-up or
    /// rebuild of the views. Lagging views are refused by the reads, or
    /// served with a warning here under `--allow-lagging-views`.
    func openForReading(adjusting adjust: (inout StoreOptions) -> Void = { _ in }) throws -> ActivityStore {
        var options = Self.options(create: false)
        adjust(&options.store)
        options.store.readOnly = true
        options.store.servesLaggingViews = allowLaggingViews
        let store = try ActivityStore(path: path, options: options)
        if allowLaggingViews, let status = try? store.eventStore.viewStatus(), !status.isCurrent, !status.hasOtherVersions {
            Output.error("eventlog: warning: the views lag the log, and answer as of an earlier position: \(status)")
        }
        return store
    }

    /// Opens the store, creating it when missing (`apply`, `demo`).
    func openOrCreate() throws -> ActivityStore {
        try Self.open(path, create: true)
    }

    static func open(_ path: String, create: Bool,
                     adjusting adjust: (inout StoreOptions) -> Void = { _ in }) throws -> ActivityStore {
        var options = options(create: create)
        adjust(&options.store)
        return try ActivityStore(path: path, options: options)
    }

    private static func options(create: Bool) -> ActivityStoreOptions {
        var options = ActivityStoreOptions()
        options.store.createIfMissing = create
        // The engine's notices (a projection rebuilt on open…) go to stderr,
        // never into the JSON on stdout.
        var logger = Logger(label: "eventlog") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .notice
        options.store.logger = logger
        return options
    }
}
