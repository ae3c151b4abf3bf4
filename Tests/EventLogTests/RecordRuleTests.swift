import EventLog
import Foundation
import LMDB
import Testing

/// The record rules of `Docs/LogFormat.md` ("Redaction"): the engine's
/// `verify` and the independent Python reader both report each broken rule at
/// its position, and both accept a redaction the log authorizes.
@Suite("Record rules and redaction, engine and independent reader")
struct RecordRuleTests {
    /// A store of 12 events whose positions 3 and 4 were redacted by the
    /// redaction record at 13, then 14 and 15 appended.
    static func redactedStore(_ path: String) throws {
        let store = try EventStore<CountingViews>(path: path, options: fastOptions())
        try store.append((0..<12).map { event("t", $0) })
        _ = try store.write { batch in try batch.redact(PositionRanges([3, 4]), context: Array("who".utf8)) }
        try store.append((12..<14).map { event("t", $0) })
    }

    /// Rewrites record `position` with `change` and a recomputed CRC-32C,
    /// as someone with write access to the file could.
    static func tamper(_ path: String, position: UInt64, _ change: (inout [UInt8]) -> Void) throws {
        let env = try Environment(path: path)
        try env.write { txn in
            let log: Database<UInt64, [UInt8]> = try txn.openDatabase("log")
            var record = try #require(try log.get(position, in: txn))
            record.removeLast(4)
            change(&record)
            withUnsafeBytes(of: crc32c(record).bigEndian) { record.append(contentsOf: $0) }
            try log.put(record, forKey: position, in: txn)
        }
    }

    func engineProblem(_ path: String) throws -> LogProblem? {
        var options = fastOptions()
        options.readOnly = true
        return try EventStore<CountingViews>(path: path, options: options).verify().firstProblem
    }

    @Test("an authorized redaction verifies in both readers")
    func authorized() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Self.redactedStore(dir.path)
        #expect(try engineProblem(dir.path) == nil)
        let (status, output) = try IndependentReaderTests().python(dir.path)
        #expect(status == 0, "\(output)")
        #expect(output.hasPrefix("ok: 15 records"), "\(output)")
    }

    /// Each damage, at position 7 (an unredacted event the redaction at 13
    /// does not name), and the problem both readers must report.
    static let damages: [(name: String, kind: LogProblem.Kind, change: @Sendable (inout [UInt8]) -> Void)] = [
        ("flagged redacted, payload emptied", .unauthorizedRedaction, { record in
            let typeLength = Int(record[2]) << 8 | Int(record[3])
            record.removeSubrange((84 + typeLength)...)
            record[1] |= 1
            record[16] = 0; record[17] = 0; record[18] = 0; record[19] = 0
        }),
        ("flagged redacted, payload kept", .redactedWithPayload, { record in record[1] |= 1 }),
        ("a reserved flag bit", .reservedFlagSet, { record in record[1] |= 0x04 }),
        ("an empty type", .invalidTypeLength, { record in
            let typeLength = Int(record[2]) << 8 | Int(record[3])
            record.removeSubrange(84..<(84 + typeLength))
            record[2] = 0; record[3] = 0
        }),
    ]

    @Test("each broken rule is reported at its position by both readers", arguments: 0..<4)
    func broken(index: Int) throws {
        let damage = Self.damages[index]
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Self.redactedStore(dir.path)
        try Self.tamper(dir.path, position: 7, damage.change)
        let problem = try #require(try engineProblem(dir.path), "\(damage.name): the engine found nothing")
        #expect(problem.position == 7 && problem.kind == damage.kind, "\(damage.name): \(problem)")
        let (status, output) = try IndependentReaderTests().python(dir.path)
        #expect(status == 1, "\(damage.name): \(output)")
        #expect(output.hasPrefix("position 7: \(damage.kind)"), "\(damage.name): \(output)")
    }

    @Test("an application cannot append an event of the engine's own types; nothing is written")
    func reservedType() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        try store.append([event("t", 0)])
        let forged = NewEvent(type: RedactionRecord.type, schemaVersion: 1, payload: [1, 1, 0])
        #expect {
            try store.append([event("t", 1), forged])
        } throws: { error in
            guard let error = error as? EventLogError else { return false }
            return error.code == .invalidArgument && "\(error)".contains("reserved for the engine")
        }
        #expect(try store.head() == 1)
        #expect(try store.verify().firstProblem == nil)
    }
}
