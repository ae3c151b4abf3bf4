import ActivityDomain
import ArgumentParser
import EventLog
import Foundation

/// `--after P [--wait S]`, shared by `search` and `query`: the keyword index
/// follows the log, so a read may name a position it must see.
struct IndexWaitOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Wait until the index has applied the log through this position (one a write printed).",
        discussion: "Without it, the read answers from the index as it is, and a note on stderr says when the index lags the log.",
        valueName: "position"))
    var after: UInt64?

    @Option(help: ArgumentHelp("With --after: how long to wait for the index, in seconds (default 10); then the read fails saying how far behind the index is.",
                               valueName: "seconds"))
    var wait: Double?

    func validate() throws {
        guard let wait else { return }
        guard after != nil else {
            // Alone it would be ignored: a read without a position waits for nothing.
            throw ValidationError("--wait \(wait) needs --after POSITION (the position to wait for); without it the read answers at once")
        }
        guard wait >= 0, wait.isFinite, wait <= 86_400 else {
            throw ValidationError("--wait is \(wait) seconds; allowed: 0 to 86400")
        }
    }

    var timeout: Duration { .milliseconds(Int64((wait ?? 10) * 1000)) }

    /// Without `--after`: a note on stderr when the index lags the log, so
    /// that a read of an index that is behind says so rather than hide it.
    func reportLag(of store: ActivityStore) {
        guard after == nil, let status = try? store.indexStatus(), !status.exists || status.eventsBehind > 0 else { return }
        Output.error("eventlog: note: \(status); --after POSITION waits for a position")
    }
}

extension StoreLocation {
    /// After a command that wrote: waits until the index has applied what
    /// it wrote (the log's head), showing progress on a terminal, so that
    /// what the command wrote is searchable once it exits; the indexer of
    /// this process then stops. When the indexer's attempts have failed for
    /// two seconds (a disk that fails its writes), it gives up with the
    /// indexer's error: what the command wrote is in the log, and the next
    /// open of the store indexes it.
    static func waitUntilSearchable(_ store: ActivityStore) throws {
        guard store.eventStore.index != nil else { return }
        let head = try store.head()
        let progress = Progress()
        defer { progress.finish() }
        while true {
            do {
                try store.eventStore.waitForIndex(through: head, timeout: .milliseconds(250))
                return
            } catch let error as EventLogError where error.code == .indexBehind {
                let applied = error.position ?? 0
                progress.update("indexing: position \(applied) of \(head)")
                if let status = try? store.indexStatus(), let failure = status.lastFailure,
                   let since = status.failingSince, Date().timeIntervalSince(since) >= 2 {
                    throw EventLogError(.indexBehind, operation: "index",
                                        "what was written is in the log, but the index stopped at \(status.applied): \(failure); "
                                            + "the next open of the store for writing indexes it", position: status.applied)
                }
            } catch let error as EventLogError where error.code == .storeClosed {
                throw error
            } catch {
                // The index cannot even be read (its lock.mdb replaced, …): what the command wrote is committed all the same.
                throw EventLogError(.indexBehind, operation: "index",
                                    "what was written is in the log, but the index could not be read: \(error); "
                                        + "the next open of the store for writing indexes it")
            }
        }
    }
}
