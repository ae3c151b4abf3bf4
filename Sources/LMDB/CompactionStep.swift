/// The steps of ``Environment/compact(path:options:beforeSwap:progress:)``,
/// in order, as its progress reports them. A crash after any of them (or in
/// between) leaves the old data file or the new one in place, whole; a
/// temporary copy left behind is removed by the next compaction or open for
/// writing.
public enum CompactionStep: String, Sendable, CaseIterable {
    /// The directory is locked exclusively, no other process has the
    /// environment open, a leftover copy is removed, the old data file is
    /// open to read.
    case locked
    /// The temporary copy exists and is being written; reported again as
    /// it grows.
    case copying
    /// The copy is written, not yet synced.
    case copied
    /// The copy is on disk (`fsync`) and closed.
    case synced
    /// The copy opened as an environment and passed the caller's check.
    case checked
    /// The copy was renamed over `data.mdb`: the store is the new file.
    case swapped
    /// The directory is synced: the swap survives a machine crash.
    case durable
    /// The new data file was opened once, alone, which reset LMDB's lock
    /// table to its transaction id.
    case reopened
}
