/// The keys that start with given bytes, as one range of the database
/// (keys sort by their bytes): walked, or deleted at once (heed's
/// `prefix_iter` and `delete_range`). A space's keys (``SpaceKey``) are
/// such a range.
///
/// ```swift
/// try db.forEach(withPrefix: SpaceKey.prefix(of: 3), in: txn) { key, value in …; return true }
/// try db.removeAll(withPrefix: SpaceKey.prefix(of: 3), in: txn)   // space 3's keys, the others' untouched
/// ```
extension Database {
    /// Calls `body` with each entry whose key starts with `prefix` (the
    /// whole key), in key order, until it returns false.
    public func forEach(withPrefix prefix: [UInt8], in txn: ReadTransaction,
                        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool) throws {
        let cursor = try self.cursor(in: txn)
        var entry = try prefix.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.starts(with: prefix) {
            guard try body(e.key, e.value) else { return }
            entry = try cursor.nextBytes()
        }
    }

    /// Deletes every entry whose key starts with `prefix`: one cursor range.
    public func removeAll(withPrefix prefix: [UInt8], in txn: WriteTransaction) throws {
        let cursor = try self.cursor(in: txn)
        var entry = try prefix.withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
        while let e = entry, e.key.starts(with: prefix) {
            try cursor.deleteCurrent()
            // After `mdb_cursor_del` the cursor stands on the next pair: MDB_NEXT returns it.
            entry = try cursor.nextBytes()
        }
    }
}
