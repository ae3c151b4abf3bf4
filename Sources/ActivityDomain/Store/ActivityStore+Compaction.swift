import EventLog

extension ActivityStore {
    /// Rewrites the store's file without LMDB's free pages, so that no byte
    /// of a forgotten user's data remains in it (SPEC §10); see
    /// ``EventLog/EventStore/compact(path:options:progress:)``. The store
    /// must be closed in every process, readers too.
    ///
    /// ```swift
    /// try store.forgetUser("alice")
    /// // … close every ActivityStore of the path, then:
    /// let result = try ActivityStore.compact(path: "/var/lib/app/activities")
    /// print(result.bytesBefore, result.bytesAfter)
    /// ```
    @discardableResult
    public static func compact(path: String, options: ActivityStoreOptions = ActivityStoreOptions(),
                               progress: (@Sendable (CompactionProgress) -> Void)? = nil) throws -> StoreCompaction {
        try EventStore<ActivityViews>.compact(path: path, options: options.store, progress: progress)
    }
}
