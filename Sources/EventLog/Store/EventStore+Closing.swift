import Foundation
import LMDB

extension EventStore {
    /// Closes the store: writes already started finish (their callers get
    /// their receipts), writes that start from now on throw
    /// ``EventLogError/Code/storeClosed``, and once the last one has
    /// committed, the indexer has committed the transaction it was in, and
    /// every read of this process has ended, both environments close
    /// (`mdb_env_close`). Afterwards every call that reads or writes
    /// throws ``EventLogError/Code/storeClosed``, a subscription ends with it,
    /// and the directory may be opened again, or compacted, in this process.
    /// Closing twice does nothing more.
    ///
    /// ```swift
    /// try store.close()
    /// do { _ = try store.head() } catch EventLogError.storeClosed { /* expected */ }
    /// let again = try EventStore<Views>(path: path)          // the same directory, the same process
    /// ```
    ///
    /// It waits for the writes in flight (a commit or two), and must never
    /// be called from inside a write's closure or a read (it would wait for
    /// itself). A store that is never closed closes when its last reference goes.
    public func close() {
        let error = closedError
        writes.close(error)
        // The index commits the transaction it is in (its checkpoint with
        // it); a later open catches up on the rest.
        indexer?.stop()
        index?.environment.close(throwingAfterwards: error)
        environment.close(throwingAfterwards: error)
        // Subscriptions waiting for a commit look again, and end.
        commits.signal()
        options.logger.info("store closed")
    }

    /// Whether ``close()`` has begun.
    public var isClosed: Bool { writes.closed != nil }

    private var closedError: EventLogError {
        EventLogError(.storeClosed, operation: "use store",
                      "the store at \(environment.path) is closed; open it again to use it")
    }
}
