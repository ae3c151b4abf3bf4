import CLMDB

/// A read-only view of the environment as of the last commit before it
/// began (`mdb_txn_begin` with `MDB_RDONLY`). Obtained from
/// ``Environment/read(_:)``; valid only inside that closure.
public class ReadTransaction {
    let pointer: OpaquePointer
    public unowned let environment: Environment
    private(set) var isOpen = true

    init(environment: Environment, begin pointer: OpaquePointer) {
        self.environment = environment
        self.pointer = pointer
    }

    /// Opens a named database that must exist (`mdb_dbi_open`), or throws
    /// ``LMDBError/notFound``.
    ///
    /// In a read-only environment that holds no database at all (an empty
    /// store: its creator was killed before its first commit), a missing
    /// database is absent instead (``Database/isAbsent``): it reads as
    /// empty, as it would once created.
    public func openDatabase<Key, Value>(
        _ name: String?, as key: Key.Type = Key.self, _ value: Value.Type = Value.self, flags: DatabaseFlags = []
    ) throws -> Database<Key, Value> {
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(pointer, name, flags.rawValue, &dbi)
        if rc == MDB_NOTFOUND, name != nil, flags.rawValue & UInt32(MDB_CREATE) == 0, environment.options.readOnly, holdsNoDatabase() {
            return .absent(name)
        }
        try check(rc, "mdb_dbi_open(\(name ?? "main"))")
        return Database(handle: dbi, name: name)
    }

    /// The main database is empty: the environment holds no named database.
    private func holdsNoDatabase() -> Bool {
        var stat = MDB_stat()
        return mdb_stat(pointer, 1, &stat) == 0 && stat.ms_entries == 0   // 1: MAIN_DBI
    }

    /// The transaction's id (`mdb_txn_id`): which commit it sees.
    public var id: Int { mdb_txn_id(pointer) }

    /// What readers keep for the transaction's life, one object a type.
    private var kept: [ObjectIdentifier: AnyObject] = [:]

    /// The object of type `T` that readers keep for this transaction's
    /// life (a cache of what they read in it), made by `make` the first
    /// time and let go with the transaction. Used on the transaction's
    /// thread, as the transaction is.
    ///
    /// ```swift
    /// let cache = txn.kept { BlockCache() }   // the same object for every reader of txn
    /// ```
    public func kept<T: AnyObject>(_ make: () -> T) -> T {
        let key = ObjectIdentifier(T.self)
        if let found = kept[key] { return unsafeDowncast(found, to: T.self) }
        let made = make()
        kept[key] = made
        return made
    }

    func abortIfOpen() {
        if isOpen {
            mdb_txn_abort(pointer)
            isOpen = false
        }
    }

    func markClosed() { isOpen = false }
}

/// The one write transaction of the environment (`mdb_txn_begin`), obtained
/// from ``Environment/write(_:)`` and committed when that closure returns.
public final class WriteTransaction: ReadTransaction {
    /// True for the `MDB_RDONLY` transaction of ``Environment/openDatabases(_:)``
    /// on a read-only environment: it opens existing databases and nothing else.
    let opensOnly: Bool

    init(environment: Environment, begin pointer: OpaquePointer, opensOnly: Bool = false) {
        self.opensOnly = opensOnly
        super.init(environment: environment, begin: pointer)
    }

    /// Opens a named database, creating it when missing (`mdb_dbi_open` with
    /// `MDB_CREATE`). The handle stays valid for the environment's life once
    /// this transaction commits. In a read-only environment's
    /// ``Environment/openDatabases(_:)``, a missing database throws
    /// ``LMDBError/notFound`` instead.
    /// (In an environment that holds no database at all, it is absent
    /// instead: ``ReadTransaction/openDatabase(_:as:_:flags:)``.)
    public func createDatabase<Key, Value>(
        _ name: String?, as key: Key.Type = Key.self, _ value: Value.Type = Value.self, flags: DatabaseFlags = []
    ) throws -> Database<Key, Value> {
        try openDatabase(name, as: key, value, flags: opensOnly ? flags : flags.union(.create))
    }

    /// Runs `body` in a child transaction (`mdb_txn_begin` with this one as
    /// parent): when `body` throws, only the child's writes are undone.
    public func nested<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        var child: OpaquePointer?
        try check(mdb_txn_begin(environment.pointer, pointer, 0, &child), "mdb_txn_begin(nested)")
        let txn = WriteTransaction(environment: environment, begin: child!)
        defer { txn.abortIfOpen() }
        let result = try body(txn)
        try txn.commit()
        return result
    }

    func commit() throws {
        markClosed()
        try check(mdb_txn_commit(pointer), "mdb_txn_commit")
    }
}
