import Foundation
import LMDB

/// What a follower knows of the stream it follows, kept in the store's
/// `meta` database (key `follow`, JSON) and written in the same transaction
/// as the records it appended: `eventlog stats` reports the lag from it.
public struct FollowState: Codable, Sendable, Equatable {
    /// The stream's name in PostgreSQL.
    public var stream: String
    /// The stream's head when the follower last looked.
    public var streamHead: Position
    /// The stream's epoch then.
    public var streamEpoch: Int64
    /// When it looked.
    public var seenAt: Date

    public init(stream: String, streamHead: Position, streamEpoch: Int64, seenAt: Date) {
        self.stream = stream
        self.streamHead = streamHead
        self.streamEpoch = streamEpoch
        self.seenAt = seenAt
    }
}

extension EventStore {
    /// Appends records exactly as another store encoded them (a follower, a
    /// restore) through the store's one write path: in one transaction the
    /// bytes are stored unchanged, every projection applies the events, and
    /// the checkpoints and head move, so the views are those the leader built.
    ///
    /// The first record must be the position after the head, each next one
    /// the next position, and each link must follow the one before; else
    /// nothing is written and the error (``EventLogError/Code/diverged``, or
    /// ``EventLogError/Code/corrupt`` for damaged bytes) names the position.
    /// `follow`, when given, is stored in the same transaction.
    ///
    /// A forget travels too (`Docs/Scaling.md`, "Erasure"). A redacted
    /// record is taken only when one of `authorizations` (or one handed in
    /// before) covers it: the leader's `eventlog.redaction` record that
    /// redacted it, at a later position, which the store keeps as a
    /// *pending authorization* until its log reaches that position. An
    /// `eventlog.redaction` record, when it arrives, redacts the earlier
    /// records it names, in the same transaction, so the log ends byte for
    /// byte the leader's.
    ///
    /// ```swift
    /// let head = try follower.appendRecords(try leader.records(after: follower.head()))
    /// ```
    @discardableResult
    public func appendRecords(_ records: [LogRecord], authorizations: [LogRecord] = [], follow: FollowState? = nil,
                              dictionaries: [(id: UInt32, bytes: [UInt8])] = []) throws -> Position {
        let encoded = try follow.map { try Self.encodeFollowState($0) }
        let receipt = try write { batch in
            try appendRecords(records, authorizations: authorizations, follow: encoded, dictionaries: dictionaries, in: batch)
        }
        return receipt.value ?? 0
    }

    /// ``appendRecords(_:authorizations:follow:)``, with the task suspended until it is committed.
    @discardableResult
    public func appendRecords(_ records: [LogRecord], authorizations: [LogRecord] = [], follow: FollowState? = nil,
                              dictionaries: [(id: UInt32, bytes: [UInt8])] = []) async throws -> Position {
        let encoded = try follow.map { try Self.encodeFollowState($0) }
        let receipt = try await write { batch in
            try self.appendRecords(records, authorizations: authorizations, follow: encoded, dictionaries: dictionaries, in: batch)
        }
        return receipt.value ?? 0
    }

    /// The body of both faces of ``appendRecords(_:authorizations:follow:)``:
    /// returns the head after the records.
    func appendRecords(_ records: [LogRecord], authorizations: [LogRecord], follow encoded: [UInt8]?,
                       dictionaries: [(id: UInt32, bytes: [UInt8])] = [], in batch: LogBatch) throws -> Position {
        try storeDictionaries(dictionaries, in: batch)
        for authorization in authorizations { try batch.authorize(pending: authorization) }
        for record in records { try batch.append(record: record) }
        if let encoded { try databases.meta.put(encoded, forKey: "follow", in: batch.transaction) }
        return batch.head
    }

    /// The redaction records this store holds as pending authorizations
    /// (past its head), by position; empty unless it is a follower or a
    /// restore that took redacted records before the record that redacted
    /// them.
    public func pendingRedactions() throws -> [LogRecord] {
        try environment.read { try databases.pendingRedactions(in: $0) }
    }

    /// What this store, as a follower, last knew of its stream; nil when it follows none.
    public func followState() throws -> FollowState? {
        let bytes = try environment.read { try databases.meta.get("follow", in: $0) }
        guard let bytes else { return nil }
        do {
            return try Self.stateDecoder.decode(FollowState.self, from: Data(bytes))
        } catch {
            throw EventLogError.corrupt(key: "follow", database: "meta", operation: "read follow state",
                                        "\(bytes.count) bytes are not the JSON of a follow state: \(error)")
        }
    }

    /// The epoch this store ships to `stream` as its leader; nil when it never shipped there.
    public func shippingEpoch(stream: String) throws -> Int64? {
        let bytes = try environment.read { try databases.meta.get("ship:" + stream, in: $0) }
        guard let bytes else { return nil }
        guard bytes.count == 8 else {
            throw EventLogError.corrupt(key: "ship:" + stream, database: "meta", operation: "read shipping epoch",
                                        "\(bytes.count) stored bytes; an epoch is 8")
        }
        return bytes.withUnsafeBytes { Int64(bigEndian: $0.loadUnaligned(as: Int64.self)) }
    }

    /// Every stream this store ships to, with its epoch, by name.
    public func shippingEpochs() throws -> [(stream: String, epoch: Int64)] {
        try environment.read { txn in
            var result: [(stream: String, epoch: Int64)] = []
            let cursor = try databases.meta.cursor(in: txn)
            var entry = try cursor.seek(atOrAfter: "ship:")
            while let (key, value) = entry, key.hasPrefix("ship:") {
                if value.count == 8 {
                    result.append((String(key.dropFirst(5)), value.withUnsafeBytes { Int64(bigEndian: $0.loadUnaligned(as: Int64.self)) }))
                }
                entry = try cursor.next()
            }
            return result
        }
    }

    /// Records that this store ships to `stream` at `epoch`; with
    /// `endingFollow`, it stops being a follower (one that took over is a
    /// leader from now on).
    public func setShippingEpoch(_ epoch: Int64, stream: String, endingFollow: Bool) throws {
        try write { batch in
            try databases.meta.put(withUnsafeBytes(of: epoch.bigEndian) { [UInt8]($0) }, forKey: "ship:" + stream, in: batch.transaction)
            if endingFollow { _ = try databases.meta.delete("follow", in: batch.transaction) }
        }
    }

    static func encodeFollowState(_ state: FollowState) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        return [UInt8](try encoder.encode(state))
    }

    static var stateDecoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
