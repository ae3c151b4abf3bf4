import LMDB

/// The log's records in position order, from a position on, as one read
/// transaction sees them: every loop over the log reads through it, so
/// that each one stops at a damaged key, naming the position, instead of
/// taking it for the end (and spinning) or for the next record.
///
/// A key that is not the next position (a gap, a key out of order, a key
/// that is not 8 bytes) throws ``EventLogError/Code/corrupt`` with that
/// position: `the log is damaged at position 63: the key after 62 is 65087`.
///
/// ```swift
/// var walk = try LogWalk(databases, from: 10, in: txn)
/// while let (position, bytes) = try walk.next() { … }   // 10, 11, … to the last record
/// ```
struct LogWalk {
    private let cursor: Cursor<UInt64, [UInt8]>
    private var entry: Cursor<UInt64, [UInt8]>.RawEntry?
    /// The position the next record must have.
    private(set) var expected: Position

    init(_ databases: LogDatabases, from position: Position, in txn: ReadTransaction) throws {
        cursor = try databases.log.cursor(in: txn)
        expected = max(position, 1)
        entry = try expected.withEncodedBytes { try cursor.seekBytes(atOrAfter: $0) }
    }

    /// The next record, or nil past the log's last key. The bytes are valid
    /// until the next call or the transaction's end.
    mutating func next() throws -> (position: Position, bytes: UnsafeRawBufferPointer)? {
        guard let (key, value) = entry else { return nil }
        let position = expected
        guard key.count == 8 else {
            throw Self.damaged(at: position, "the key after position \(position - 1) is \(key.count) bytes, not 8")
        }
        let found = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
        guard found == position else {
            throw Self.damaged(at: position, position == 1 ? "its first key is \(found)" : "the key after position \(position - 1) is \(found)")
        }
        expected += 1
        entry = try cursor.nextBytes()
        return (position, value)
    }

    /// Throws unless the walk has passed `end`: the log ended before it.
    func checkReached(_ end: Position) throws {
        if expected <= end {
            throw EventLogError(.corrupt, operation: "read", "position \(expected) is missing from the log: it ends at \(expected - 1)",
                                position: expected)
        }
    }

    static func damaged(at position: Position, _ detail: String) -> EventLogError {
        EventLogError(.corrupt, operation: "read", "the log is damaged at position \(position): \(detail)", position: position)
    }
}
