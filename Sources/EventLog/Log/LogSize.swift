import LMDB

/// What a store's log holds and what it takes (``EventStore/logSize(through:progress:)``):
/// `eventlog stats` prints it.
public struct LogSize: Sendable, Equatable {
    public var records = 0
    /// Records whose payload is stored compressed.
    public var compressedRecords = 0
    /// The records' bytes as appended: each record with its payload
    /// uncompressed (88 + type + payload bytes, format 1's size).
    public var rawBytes = 0
    /// The records' bytes as stored.
    public var storedBytes = 0
    /// The records' count by event type (its UTF-8 bytes).
    public var types: [[UInt8]: Int] = [:]
    /// The dictionaries the log holds, and their bytes.
    public var dictionaries = 0
    public var dictionaryBytes = 0
}

extension EventStore {
    /// Walks the log through `end` (the head when nil) in short read
    /// transactions, reading only the records' headers (no payload is
    /// decompressed): counts, raw and stored bytes, types.
    public func logSize(through end: Position? = nil, progress: ((Position, Position) -> Void)? = nil) throws -> LogSize {
        let last = try end ?? head()
        var size = LogSize()
        var next: Position = 1
        while next <= last {
            try environment.read { txn in
                var walk = try LogWalk(databases, from: next, in: txn)
                var count = 0
                while count < 8_192, next <= last, let (position, bytes) = try walk.next() {
                    let view = RecordLayout.View(bytes: bytes)
                    guard view.isWellFormed else {
                        throw EventLogError(.corrupt, operation: "read", "the record is malformed", position: position)
                    }
                    size.records += 1
                    if view.isCompressed { size.compressedRecords += 1 }
                    size.storedBytes += bytes.count
                    size.rawBytes += RecordLayout.size(typeLength: view.typeLength, payloadLength: view.payloadLength)
                    size.types[[UInt8](view.type), default: 0] += 1
                    next = position + 1
                    count += 1
                }
                if count == 0 { next = last + 1 }
            }
            progress?(next - 1, last)
        }
        if let table = databases.dictionaryTable {
            try environment.read { txn in
                let cursor = try table.cursor(in: txn)
                var entry = try cursor.firstBytes()
                while let (_, value) = entry {
                    size.dictionaries += 1
                    size.dictionaryBytes += value.count
                    entry = try cursor.nextBytes()
                }
            }
        }
        return size
    }
}
