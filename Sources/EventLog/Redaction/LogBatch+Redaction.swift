import Foundation
import LMDB

extension LogBatch {
    /// Removes the payloads of the records at `positions` and appends the
    /// ``RedactionRecord`` that authorizes it, in this batch's transaction.
    ///
    /// The redaction record comes first (at the next position), so every
    /// projection applies it like any event and can drop what it built from
    /// the payloads (its `context` says what, in the application's terms;
    /// the engine does not read it). Then each record named keeps its
    /// position, type, schema version, time, payload digest and link, gets
    /// flag bit 0 and an empty payload, and a new CRC-32C: the hash chain
    /// still verifies, since a link covers the digest and not the payload.
    /// The `redactions` database maps each range to the record that
    /// authorized it, so that readers give redacted events their
    /// ``RecordedEvent/redactedBy``. Snapshots from the first position named
    /// on are removed by the store around the commit.
    ///
    /// ```swift
    /// try store.write { batch in
    ///     try batch.redact(PositionRanges([3, 4, 9]), context: Array("user alice".utf8))
    /// }
    /// ```
    ///
    /// Throws `invalidArgument` (and the caller's write rolls back) when
    /// `positions` is empty, names a position past the head, an already
    /// redacted record, or a redaction record.
    @discardableResult
    public func redact(_ positions: PositionRanges, context: [UInt8] = [], at time: Date? = nil) throws -> RecordedEvent {
        guard let first = positions.first, let last = positions.last else {
            throw EventLogError(.invalidArgument, operation: "redact", "no positions to redact; allowed: 1 or more positions up to the head")
        }
        guard last <= head else {
            throw EventLogError(.invalidArgument, operation: "redact",
                                "position \(last) is past the head \(head); allowed: positions 1 to \(head)", position: last)
        }
        for range in positions.ranges {
            for position in range {
                let problem: String? = try databases.log.withValue(forKey: position, in: transaction) { bytes in
                    let view = RecordLayout.View(bytes: bytes)
                    guard view.isWellFormed else { return "the record is malformed" }
                    if view.isRedacted { return "the record is already redacted" }
                    if view.type.elementsEqual(RedactionRecord.type.utf8) { return "a redaction record cannot be redacted" }
                    return nil
                } ?? "no record there"
                if let problem {
                    throw EventLogError(.invalidArgument, operation: "redact",
                                        "position \(position): \(problem); allowed: unredacted event records", position: position)
                }
            }
        }
        let authorization = try appendEvent(NewEvent(type: RedactionRecord.type, schemaVersion: RedactionRecord.schemaVersion,
                                                payload: RedactionRecord(positions: positions, context: context).payload, at: time))
        var scratch: [UInt8] = []
        for range in positions.ranges {
            for position in range {
                scratch.removeAll(keepingCapacity: true)
                try databases.log.withValue(forKey: position, in: transaction) { bytes in
                    RecordLayout.appendRedacted(RecordLayout.View(bytes: bytes), to: &scratch)
                }
                try databases.log.put(scratch, forKey: position, in: transaction)
            }
            try databases.putRedaction(range, by: authorization.position, in: transaction)
        }
        redactedFrom = min(redactedFrom ?? first, first)
        return authorization
    }

    // MARK: Exact records (followers, restores)

    /// Hands this batch a redaction record that lies past the head (a
    /// follower's or a restore's *pending authorization*, fetched from the
    /// stream): redacted records it covers may then be appended before it.
    /// Stored in `meta` (`pendingRedaction:` and the position) until the log
    /// reaches its position, where the record appended must be this one,
    /// byte for byte. One at or before the head must equal the log's record.
    ///
    /// Throws ``EventLogError/Code/corrupt`` for bytes that are not a whole
    /// `eventlog.redaction` record naming earlier positions, and
    /// ``EventLogError/Code/diverged`` for one that differs from what this
    /// log holds or was handed before at that position.
    func authorize(pending record: LogRecord) throws {
        let decoded = try PendingRedaction.check(record)
        if record.position <= head {
            guard try databases.log.get(record.position, in: transaction) == record.bytes else {
                throw EventLogError(.diverged, operation: "append record",
                                    "the redaction record handed in for position \(record.position) differs from this log's record there: the histories differ",
                                    position: record.position)
            }
            return
        }
        let key = LogDatabases.pendingRedactionKey(record.position)
        if let known = try databases.meta.get(key, in: transaction) {
            guard known == record.bytes else {
                throw EventLogError(.diverged, operation: "append record",
                                    "the redaction record handed in for position \(record.position) differs from the one this store holds as its pending authorization",
                                    position: record.position)
            }
            return
        }
        try databases.meta.put(record.bytes, forKey: key, in: transaction)
        try redactions.setPending(decoded, at: record.position, in: transaction)
    }

    /// What authorizes a record arriving through ``append(record:)``, and
    /// which earlier records it redacts when it is a redaction record.
    struct RecordArrival {
        var authorization: (position: Position, record: RedactionRecord)?
        var names: RedactionRecord?
    }

    /// Before an exact record is stored: a redacted one must be covered by a
    /// pending authorization; a redaction record must decode, and equal the
    /// pending authorization at its position if there is one (which it
    /// replaces).
    func checkRedaction(arriving record: LogRecord) throws -> RecordArrival {
        if record.isRedacted {
            guard let pending = try redactions.pending(covering: record.position, in: transaction) else {
                throw EventLogError(.corrupt, operation: "append record",
                                    "record \(record.position) is flagged redacted, but no redaction record authorizes it; allowed: a redacted record with a pending authorization (the later \(RedactionRecord.type) record that covers it)",
                                    position: record.position)
            }
            return RecordArrival(authorization: pending)
        }
        guard record.type == RedactionRecord.type else { return RecordArrival() }
        let decoded = try PendingRedaction.check(record)
        let key = LogDatabases.pendingRedactionKey(record.position)
        if let pending = try databases.meta.get(key, in: transaction) {
            guard pending == record.bytes else {
                throw EventLogError(.diverged, operation: "append record",
                                    "redaction record \(record.position) differs from the pending authorization this store was handed for that position: the histories differ",
                                    position: record.position)
            }
            _ = try databases.meta.delete(key, in: transaction)
            try redactions.setPending(nil, at: record.position, in: transaction)
        }
        return RecordArrival(names: decoded)
    }

    /// After a redaction record arrived at `authorization`: the earlier
    /// records it names lose their payloads as on the leader (those that
    /// arrived redacted already have), and the `redactions` database
    /// records the ranges.
    func redactNamed(_ named: RedactionRecord, by authorization: Position) throws {
        var scratch: [UInt8] = []
        var firstRewritten: Position?
        for range in named.positions.ranges {
            for position in range {
                scratch.removeAll(keepingCapacity: true)
                let problem: String? = try databases.log.withValue(forKey: position, in: transaction) { bytes in
                    let view = RecordLayout.View(bytes: bytes)
                    guard view.isWellFormed else { return "the record is malformed" }
                    if view.type.elementsEqual(RedactionRecord.type.utf8) { return "it is a redaction record" }
                    if !view.isRedacted { RecordLayout.appendRedacted(view, to: &scratch) }
                    return nil
                } ?? "no record there"
                if problem == nil, scratch.isEmpty, let earlier = try databases.redactedBy(position, in: transaction) {
                    throw EventLogError(.corrupt, operation: "append record",
                                        "redaction record \(authorization) names position \(position), already redacted by the record at \(earlier)",
                                        position: authorization)
                }
                if let problem {
                    throw EventLogError(.corrupt, operation: "append record",
                                        "redaction record \(authorization) names position \(position): \(problem)", position: authorization)
                }
                if !scratch.isEmpty {
                    try databases.log.put(scratch, forKey: position, in: transaction)
                    if firstRewritten == nil { firstRewritten = position }
                }
            }
            try databases.putRedaction(range, by: authorization, in: transaction)
        }
        if let first = firstRewritten { redactedFrom = min(redactedFrom ?? first, first) }
    }
}

extension RecordLayout {
    /// The redacted form of `view`: the same header but flag bit 0 set and
    /// P = 0, the type, no payload, a new CRC-32C.
    static func appendRedacted(_ view: View, to out: inout [UInt8]) {
        let t = view.typeLength
        out.append(contentsOf: view.bytes[0..<(headerSize + t)])
        out[1] = (out[1] & ~compressedFlag) | redactedFlag
        out[16] = 0; out[17] = 0; out[18] = 0; out[19] = 0
        let crc = out.withUnsafeBytes { CRC32C.checksum($0) }
        withUnsafeBytes(of: crc.bigEndian) { out.append(contentsOf: $0) }
    }
}

extension LogDatabases {
    /// The position of the redaction record that redacted `position`, per
    /// the `redactions` database; nil when none did.
    func redactedBy(_ position: Position, in txn: ReadTransaction) throws -> Position? {
        let cursor = try redactions.cursor(in: txn)
        guard let entry = try position.withEncodedBytes({ try cursor.seekBytes(atOrAfter: $0) }),
              entry.value.count == 16 else { return nil }
        let start = UInt64(bigEndian: entry.value.loadUnaligned(as: UInt64.self))
        guard start <= position else { return nil }
        return UInt64(bigEndian: entry.value.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// The position of a redaction record after `position` that redacted
    /// an event at or before it (the first such range's), or nil: a
    /// snapshot at `position` would hold what that redaction erased. Reads
    /// `redactions` up to `position` (its ranges are disjoint, so sorted by
    /// first position too).
    func redaction(after position: Position, in txn: ReadTransaction) throws -> Position? {
        let cursor = try redactions.cursor(in: txn)
        var entry = try cursor.firstBytes()
        while let (_, value) = entry, value.count == 16 {
            if UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)) > position { return nil }
            let by = UInt64(bigEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            if by > position { return by }
            entry = try cursor.nextBytes()
        }
        return nil
    }

    /// Every redacted range, as (first position, position of the redaction
    /// record): what a snapshot's position must not fall between.
    func redactedRanges(in txn: ReadTransaction) throws -> [(first: Position, by: Position)] {
        let cursor = try redactions.cursor(in: txn)
        var ranges: [(first: Position, by: Position)] = []
        var entry = try cursor.firstBytes()
        while let (_, value) = entry {
            if value.count == 16 {
                ranges.append((UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)),
                               UInt64(bigEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self))))
            }
            entry = try cursor.nextBytes()
        }
        return ranges
    }

    /// Records in `redactions` that `range` was redacted by the record at `by`.
    func putRedaction(_ range: ClosedRange<Position>, by: Position, in txn: WriteTransaction) throws {
        var value = [UInt8](repeating: 0, count: 16)
        value.withUnsafeMutableBytes {
            $0.storeBytes(of: range.lowerBound.bigEndian, as: UInt64.self)
            $0.storeBytes(of: by.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        try redactions.put(value, forKey: range.upperBound, in: txn)
    }

}

extension EventStore {
    /// Whether a redaction record after `position` redacted an event at or
    /// before it. A snapshot at `position` would then hold views built from
    /// payloads that are gone: the redaction removes such snapshots, but one
    /// that another process was writing meanwhile can appear after it, and
    /// a rebuild must not start from it. Reads `redactions` up to
    /// `position` (its ranges are disjoint, so sorted by first position too).
    func redactedLater(than position: Position) throws -> Bool {
        try environment.read { try databases.redaction(after: position, in: $0) } != nil
    }

    /// Whether a redaction record in the log after `applied` (so at or
    /// before the head) redacted an event at or before `applied`: an index
    /// that applied through `applied` applied that event's payload, which a
    /// rebuild no longer reads, and has not yet applied the redaction that
    /// drops it. (A record that arrived redacted, authorized by a record
    /// not yet in the log, was never applied with its payload.)
    func redactedAfterApplying(through applied: Position) throws -> Bool {
        try environment.read { txn in
            let head = try databases.head(in: txn).position
            let cursor = try databases.redactions.cursor(in: txn)
            var entry = try cursor.firstBytes()
            while let (_, value) = entry, value.count == 16 {
                if UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)) > applied { return false }
                let by = UInt64(bigEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                if by > applied && by <= head { return true }
                entry = try cursor.nextBytes()
            }
            return false
        }
    }
}

/// The snapshots a redaction removes: they hold views built from the
/// payloads it redacted.
enum RedactedSnapshots {
    /// Removes every snapshot at `position` or later (the index's too), and
    /// returns the positions of the whole views' snapshots removed: they hold views built from
    /// payloads that a redaction removed. Runs inside the redacting write
    /// (`throwing`: before its commit, so that a snapshot that cannot be
    /// removed fails the write rather than keep the data it was to erase; a
    /// crash then loses only snapshots, which are a cache) and again after
    /// it (a snapshot begun meanwhile; an error there is not reported, the
    /// redaction has committed).
    @discardableResult
    static func remove(from position: Position, in snapshotDirectory: String, throwing: Bool) throws -> [Position] {
        // By name (20 digits, then `.snapshot`, maybe `.partial-PID`), so
        // that damaged and half-written files go as well.
        guard FileManager.default.fileExists(atPath: snapshotDirectory) else { return [] }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: snapshotDirectory)
        } catch {
            guard throwing else { return [] }
            throw EventLogError(.snapshot, operation: "redact", "cannot list \(snapshotDirectory) to remove the snapshots from position \(position) on: \(error)")
        }
        var removed: [Position] = []
        for name in names.sorted() where name.contains(".snapshot") {
            guard let p = UInt64(name.prefix { $0.isNumber }), p >= position else { continue }
            let path = (snapshotDirectory as NSString).appendingPathComponent(name)
            do {
                try FileManager.default.removeItem(atPath: path)
                // The views' snapshots are listed (`snapshots()`); the index's go with them unlisted.
                if name.hasSuffix(SnapshotKind.views.suffix) && !name.hasSuffix(SnapshotKind.index.suffix) { removed.append(p) }
            } catch {
                // Gone meanwhile (another process, a partial file renamed) is fine.
                guard throwing, FileManager.default.fileExists(atPath: path) else { continue }
                throw EventLogError(.snapshot, operation: "redact",
                                    "cannot remove \(path), which holds views built from the payloads being redacted: \(error)")
            }
        }
        return removed
    }
}
