import EventLog
import Foundation
import Logging
import PostgresNIO

/// A stream's head in PostgreSQL: the epoch of the leader that may ship to
/// it, and the position and link of its last record.
public struct StreamHead: Sendable, Equatable, CustomStringConvertible {
    public var epoch: Int64
    public var position: Position
    public var link: ChainLink

    public var description: String { "epoch \(epoch), position \(position), link \(link)" }
}

/// The tables a stream lives in (`Docs/Scaling.md` gives the layout):
///
/// ```sql
/// CREATE TABLE eventlog_streams (        -- one row a stream: its head
///     stream     text PRIMARY KEY,
///     epoch      bigint NOT NULL,        -- the leader's epoch; a take-over adds 1
///     position   bigint NOT NULL,        -- the last record's position (0: none yet)
///     link       bytea  NOT NULL,        -- the last record's link (32 bytes)
///     updated_at timestamptz NOT NULL);
/// CREATE TABLE eventlog_records (        -- the records, byte for byte
///     stream   text   NOT NULL,
///     position bigint NOT NULL,
///     epoch    bigint NOT NULL,          -- the epoch that shipped it
///     record   bytea  NOT NULL,          -- the record as the log holds it
///     PRIMARY KEY (stream, position));
/// CREATE TABLE eventlog_redactions (     -- what each redaction record redacted
///     stream      text   NOT NULL,
///     last        bigint NOT NULL,       -- a range's last position
///     first       bigint NOT NULL,       -- its first
///     redacted_by bigint NOT NULL,       -- the position of the eventlog.redaction record
///     PRIMARY KEY (stream, last));
/// CREATE TABLE eventlog_dictionaries (   -- the zstd dictionaries compressed records name
///     stream     text   NOT NULL,
///     id         bigint NOT NULL,        -- the id records name it by
///     dictionary bytea  NOT NULL,        -- as the store holds it in `dictionaries`
///     PRIMARY KEY (stream, id));
/// ```
///
/// Positions come from the leader's log, never from a PostgreSQL sequence.
struct StreamTables {
    let connection: PostgresConnection
    let stream: String
    let logger: Logger

    /// The channel of `NOTIFY`; the payload is the stream's name. Only a
    /// wake-up hint: followers also poll.
    static let channel = "eventlog_records"

    /// A stream name: 1 to 128 of `A-Z a-z 0-9 . _ -`.
    static func validate(stream: String, operation: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard (1...128).contains(stream.count), stream.allSatisfy({ allowed.contains($0) }) else {
            throw ShippingError(.invalidArgument, operation: operation,
                                "stream name \"\(stream)\" is not allowed; allowed: 1 to 128 of A-Z a-z 0-9 . _ -")
        }
    }

    /// The longest a statement or a batch's transaction may take before the
    /// connection is given up and the work retried on a new one: 60 s, or
    /// the whole seconds in `EVENTLOG_POSTGRES_DEADLINE` (1 to 86,400; read
    /// once). The test script raises it, because a test process whose
    /// cooperative threads are held by synchronous tests for minutes would
    /// otherwise give up a connection that is fine.
    static let deadline: Duration = {
        guard let text = ProcessInfo.processInfo.environment["EVENTLOG_POSTGRES_DEADLINE"],
              let seconds = Int(text), (1...86_400).contains(seconds) else { return .seconds(60) }
        return .seconds(seconds)
    }()

    func create() async throws {
        try await withDeadline(Self.deadline, "create tables") { try await self.createTables() }
    }

    /// Creates the tables when missing. Under a transaction-scoped advisory
    /// lock, so that two shippers starting together do not race on
    /// `CREATE TABLE IF NOT EXISTS`; without any lock once all three exist
    /// (every start but the first), so that a start never waits for another
    /// connection's transaction.
    private func createTables() async throws {
        let rows = try await connection.query("""
            SELECT to_regclass('eventlog_streams') IS NOT NULL AND to_regclass('eventlog_records') IS NOT NULL
                AND to_regclass('eventlog_redactions') IS NOT NULL AND to_regclass('eventlog_dictionaries') IS NOT NULL
            """, logger: logger)
        for try await exist in rows.decode(Bool.self) where exist { return }
        try await connection.inTransaction(logger: logger, operation: "create tables") { c in
            try await c.query("SELECT pg_advisory_xact_lock(7310503347416952676)", logger: logger)
            try await c.query("""
                CREATE TABLE IF NOT EXISTS eventlog_streams (
                    stream text PRIMARY KEY,
                    epoch bigint NOT NULL,
                    position bigint NOT NULL,
                    link bytea NOT NULL,
                    updated_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            try await c.query("""
                CREATE TABLE IF NOT EXISTS eventlog_records (
                    stream text NOT NULL,
                    position bigint NOT NULL,
                    epoch bigint NOT NULL,
                    record bytea NOT NULL,
                    PRIMARY KEY (stream, position))
                """, logger: logger)
            try await c.query("""
                CREATE TABLE IF NOT EXISTS eventlog_redactions (
                    stream text NOT NULL,
                    last bigint NOT NULL,
                    first bigint NOT NULL,
                    redacted_by bigint NOT NULL,
                    PRIMARY KEY (stream, last))
                """, logger: logger)
            try await c.query("""
                CREATE TABLE IF NOT EXISTS eventlog_dictionaries (
                    stream text NOT NULL,
                    id bigint NOT NULL,
                    dictionary bytea NOT NULL,
                    PRIMARY KEY (stream, id))
                """, logger: logger)
        }
    }

    // MARK: Dictionaries

    /// Of the dictionaries `ids`, those the stream does not hold, in `c`'s transaction.
    func missingDictionaries(_ ids: [UInt32], on c: PostgresConnection) async throws -> [UInt32] {
        guard !ids.isEmpty else { return [] }
        let wanted = ids.map { Int64($0) }
        let rows = try await c.query(
            "SELECT id FROM eventlog_dictionaries WHERE stream = \(stream) AND id = ANY(\(wanted)::bigint[])", logger: logger)
        var held = Set<UInt32>()
        for try await id in rows.decode(Int64.self) { held.insert(UInt32(truncatingIfNeeded: id)) }
        return ids.filter { !held.contains($0) }
    }

    /// Stores a dictionary in the stream, in `c`'s transaction.
    func insertDictionary(_ id: UInt32, _ bytes: [UInt8], on c: PostgresConnection) async throws {
        let buffer = ByteBuffer(bytes: bytes)
        try await c.query("""
            INSERT INTO eventlog_dictionaries (stream, id, dictionary) VALUES (\(stream), \(Int64(id)), \(buffer))
            ON CONFLICT (stream, id) DO NOTHING
            """, logger: logger)
    }

    /// The dictionaries `ids`, as the stream holds them; throws when one is missing.
    func dictionaries(_ ids: [UInt32]) async throws -> [(id: UInt32, bytes: [UInt8])] {
        guard !ids.isEmpty else { return [] }
        return try await withDeadline(Self.deadline, "read stream dictionaries") {
            let wanted = ids.map { Int64($0) }
            let rows = try await self.connection.query(
                "SELECT id, dictionary FROM eventlog_dictionaries WHERE stream = \(self.stream) AND id = ANY(\(wanted)::bigint[]) ORDER BY id",
                logger: self.logger)
            var result: [(id: UInt32, bytes: [UInt8])] = []
            for try await (id, bytes) in rows.decode((Int64, ByteBuffer).self) {
                result.append((UInt32(truncatingIfNeeded: id), Array(bytes.readableBytesView)))
            }
            if let missing = ids.first(where: { id in !result.contains { $0.id == id } }) {
                throw ShippingError(.missing, operation: "read stream", "dictionary \(missing), which the stream's records name, is missing from stream \(self.stream)")
            }
            return result
        }
    }

    /// The stream's head; nil when the stream (or the tables) do not exist.
    func head() async throws -> StreamHead? {
        try await withDeadline(Self.deadline, "read stream head") { try await self.head(on: self.connection) }
    }

    /// The head as `c` sees it, locked until the end of its transaction with `forUpdate`.
    func head(on c: PostgresConnection, forUpdate: Bool = false) async throws -> StreamHead? {
        let rows: PostgresRowSequence
        do {
            rows = forUpdate
                ? try await c.query("SELECT epoch, position, link FROM eventlog_streams WHERE stream = \(stream) FOR UPDATE", logger: logger)
                : try await c.query("SELECT epoch, position, link FROM eventlog_streams WHERE stream = \(stream)", logger: logger)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
            return nil   // undefined_table: nothing was ever shipped to this database
        }
        for try await (epoch, position, link) in rows.decode((Int64, Int64, ByteBuffer).self) {
            guard position >= 0, let chainLink = ChainLink(Array(link.readableBytesView)) else {
                throw ShippingError(.diverged, operation: "read stream head",
                                    "stream \(stream)'s head row is malformed (position \(position), link of \(link.readableBytes) bytes)")
            }
            return StreamHead(epoch: epoch, position: Position(position), link: chainLink)
        }
        return nil
    }

    /// Creates the stream's head row at `epoch`, position 0, unless it exists.
    func createHead(epoch: Int64) async throws {
        try await withDeadline(Self.deadline, "create stream head") { try await self.insertHead(epoch: epoch) }
    }

    private func insertHead(epoch: Int64) async throws {
        let zero = ByteBuffer(bytes: ChainLink.zero.bytes)
        try await connection.query("""
            INSERT INTO eventlog_streams (stream, epoch, position, link) VALUES (\(stream), \(epoch), 0, \(zero))
            ON CONFLICT (stream) DO NOTHING
            """, logger: logger)
    }

    /// Up to `limit` records after `position` (through `end`), in order.
    /// Throws when one is missing: positions must follow each other.
    func records(after position: Position, through end: Position, limit: Int) async throws -> [LogRecord] {
        guard position < end else { return [] }
        return try await withDeadline(Self.deadline, "read stream") {
            try await self.fetch(after: position, through: end, limit: limit)
        }
    }

    private func fetch(after position: Position, through end: Position, limit: Int) async throws -> [LogRecord] {
        let rows = try await connection.query("""
            SELECT position, record FROM eventlog_records
            WHERE stream = \(stream) AND position > \(Int64(position)) AND position <= \(Int64(end))
            ORDER BY position LIMIT \(Int64(limit))
            """, logger: logger)
        var result: [LogRecord] = []
        var expected = position + 1
        for try await (p, bytes) in rows.decode((Int64, ByteBuffer).self) {
            guard p == Int64(expected) else {
                throw ShippingError(.missing, operation: "read stream", "record \(expected) is missing from stream \(stream)", position: expected)
            }
            do {
                result.append(try LogRecord(position: expected, bytes: Array(bytes.readableBytesView)))
            } catch let error as EventLogError {
                throw ShippingError(.diverged, operation: "read stream", "stream \(stream): \(error.message)", position: expected)
            }
            expected += 1
        }
        if result.isEmpty {
            throw ShippingError(.missing, operation: "read stream", "record \(expected) is missing from stream \(stream)", position: expected)
        }
        return result
    }

    /// The record at `position`, or nil.
    func record(at position: Position) async throws -> LogRecord? {
        try await withDeadline(Self.deadline, "read stream") { try await self.fetch(at: position) }
    }

    private func fetch(at position: Position) async throws -> LogRecord? {
        let rows = try await connection.query(
            "SELECT record FROM eventlog_records WHERE stream = \(stream) AND position = \(Int64(position))", logger: logger)
        for try await bytes in rows.decode(ByteBuffer.self) {
            return try LogRecord(position: position, bytes: Array(bytes.readableBytesView))
        }
        return nil
    }

    // MARK: Redactions

    /// Notes the ranges of the redaction record at `position` in
    /// `eventlog_redactions`, in `c`'s transaction.
    func recordRedaction(_ redaction: RedactionRecord, at position: Position, on c: PostgresConnection) async throws {
        let ranges = redaction.positions.ranges
        for start in stride(from: 0, to: ranges.count, by: 10_000) {
            let piece = ranges[start..<min(start + 10_000, ranges.count)]
            let lasts = piece.map { Int64($0.upperBound) }, firsts = piece.map { Int64($0.lowerBound) }
            try await c.query("""
                INSERT INTO eventlog_redactions (stream, last, first, redacted_by)
                SELECT \(stream), l, f, \(Int64(position)) FROM unnest(\(lasts)::bigint[], \(firsts)::bigint[]) AS t(l, f)
                """, logger: logger)
        }
    }

    /// Replaces the rows of `records` (their redacted forms) in `c`'s
    /// transaction. Every row must be there with the same digest and link
    /// (bytes 20 to 83 of a record): else nothing is written and the error
    /// says the stream's records differ.
    func replaceRecords(_ records: [LogRecord], on c: PostgresConnection) async throws {
        guard let first = records.first else { return }
        let positions = records.map { Int64($0.position) }
        let bytes = records.map { ByteBuffer(bytes: $0.bytes) }
        let rows = try await c.query("""
            WITH t AS (SELECT p, r FROM unnest(\(positions)::bigint[], \(bytes)::bytea[]) AS t(p, r)),
            u AS (UPDATE eventlog_records e SET record = t.r FROM t
                  WHERE e.stream = \(stream) AND e.position = t.p AND e.record <> t.r
                    AND substring(e.record from 21 for 64) = substring(t.r from 21 for 64)
                  RETURNING e.position)
            SELECT (SELECT count(*) FROM u),
                   (SELECT count(*) FROM eventlog_records e JOIN t ON e.position = t.p WHERE e.stream = \(stream) AND e.record = t.r)
            """, logger: logger)
        for try await (updated, same) in rows.decode((Int64, Int64).self) where updated + same != Int64(records.count) {
            throw ShippingError(.diverged, operation: "ship",
                                "stream \(stream) holds \(Int64(records.count) - updated - same) of the records \(first.position)…\(records[records.count - 1].position) that a redaction names with another digest or link than this store's, or not at all: a different history",
                                position: first.position)
        }
    }

    /// The positions of the redaction records that redacted records after
    /// `position` through `end`, from `eventlog_redactions` (none when the
    /// table does not exist). The ranges are disjoint, so those that meet
    /// the interval are the ones that end in it and the first one after.
    func authorizations(after position: Position, through end: Position) async throws -> [Position] {
        try await withDeadline(Self.deadline, "read stream redactions") {
            let rows: PostgresRowSequence
            do {
                rows = try await self.connection.query("""
                    SELECT redacted_by FROM eventlog_redactions
                    WHERE stream = \(self.stream) AND last > \(Int64(position)) AND last <= \(Int64(end))
                    UNION
                    SELECT redacted_by FROM (
                        SELECT first, redacted_by FROM eventlog_redactions
                        WHERE stream = \(self.stream) AND last > \(Int64(end)) ORDER BY last LIMIT 1) AS next
                    WHERE first <= \(Int64(end))
                    """, logger: self.logger)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
                return []
            }
            var result: [Position] = []
            for try await by in rows.decode(Int64.self) where by > 0 { result.append(Position(by)) }
            return result.sorted()
        }
    }

    /// The records at `positions`; throws when one is missing.
    func records(at positions: [Position]) async throws -> [LogRecord] {
        guard !positions.isEmpty else { return [] }
        return try await withDeadline(Self.deadline, "read stream") {
            let wanted = positions.map { Int64($0) }
            let rows = try await self.connection.query(
                "SELECT position, record FROM eventlog_records WHERE stream = \(self.stream) AND position = ANY(\(wanted)::bigint[]) ORDER BY position",
                logger: self.logger)
            var result: [LogRecord] = []
            for try await (p, bytes) in rows.decode((Int64, ByteBuffer).self) {
                do {
                    result.append(try LogRecord(position: Position(p), bytes: Array(bytes.readableBytesView)))
                } catch let error as EventLogError {
                    throw ShippingError(.diverged, operation: "read stream", "stream \(self.stream): \(error.message)", position: Position(p))
                }
            }
            if let missing = positions.first(where: { p in !result.contains { $0.position == p } }) {
                throw ShippingError(.missing, operation: "read stream", "record \(missing) is missing from stream \(self.stream)", position: missing)
            }
            return result
        }
    }
}
