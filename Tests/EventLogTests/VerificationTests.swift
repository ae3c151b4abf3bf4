import EventLog
import Foundation
import LMDB
import Testing

/// Damage done through raw LMDB, below the engine, as a disk fault or a
/// careless tool would.
@Suite("Verification names the first bad position")
struct VerificationTests {
    /// A closed store of 100 events, then `damage` applied to its `log` database.
    func verifyAfter(_ damage: (Database<UInt64, [UInt8]>, WriteTransaction) throws -> Void) throws -> LogVerification {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            for b in 0..<10 { try store.append((0..<10).map { event("t", b * 10 + $0, size: 100) }) }
            #expect(try store.verify().isValid)
        }
        do {
            let env = try Environment(path: dir.path)
            try env.write { txn in try damage(try txn.openDatabase("log"), txn) }
        }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        return try store.verify()
    }

    @Test("a flipped byte in a payload: checksum mismatch at that position")
    func flippedPayloadByte() throws {
        let report = try verifyAfter { log, txn in
            var record = try #require(try log.get(37, in: txn))
            record[record.count - 10] ^= 0x01
            try log.put(record, forKey: 37, in: txn)
        }
        #expect(report.firstProblem?.position == 37)
        #expect(report.firstProblem?.kind == .checksumMismatch)
        #expect(report.recordsChecked == 36)
    }

    @Test("a flipped byte with the checksum recomputed: the payload digest catches it")
    func flippedByteWithForgedChecksum() throws {
        let report = try verifyAfter { log, txn in
            var record = try #require(try log.get(12, in: txn))
            record[record.count - 10] ^= 0x01
            let crc = crc32c(record.dropLast(4))
            record.replaceSubrange((record.count - 4)..., with: withUnsafeBytes(of: crc.bigEndian) { Array($0) })
            try log.put(record, forKey: 12, in: txn)
        }
        #expect(report.firstProblem?.position == 12)
        #expect(report.firstProblem?.kind == .payloadDigestMismatch)
    }

    @Test("the last record cut shorter than a header: reported at its position, not thrown")
    func lastRecordCutShort() throws {
        // Damaged under an open store (opening one whose last record is
        // damaged fails: a writer needs that record's link).
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        for b in 0..<10 { try store.append((0..<10).map { event("t", b * 10 + $0, size: 100) }) }
        try store.environment.write { txn in
            let log: Database<UInt64, [UInt8]> = try txn.openDatabase("log")
            let record = try #require(try log.get(100, in: txn))
            try log.put(Array(record.prefix(40)), forKey: 100, in: txn)
        }
        let report = try store.verify()
        #expect(report.firstProblem?.position == 100)
        #expect(report.firstProblem?.kind == .malformedRecord)
        #expect(report.recordsChecked == 99)
    }

    @Test("a deleted record: a gap at its position")
    func deletedRecord() throws {
        let report = try verifyAfter { log, txn in try log.delete(50, in: txn) }
        #expect(report.firstProblem?.position == 50)
        #expect(report.firstProblem?.kind == .gap)
    }

    @Test("two records swapped: the chain breaks at the first of them")
    func swappedRecords() throws {
        let report = try verifyAfter { log, txn in
            let a = try #require(try log.get(20, in: txn))
            let b = try #require(try log.get(21, in: txn))
            try log.put(b, forKey: 20, in: txn)
            try log.put(a, forKey: 21, in: txn)
        }
        #expect(report.firstProblem?.position == 20)
        #expect(report.firstProblem?.kind == .chainBreak)
    }

    @Test("the last records cut off: the recorded head names the loss")
    func truncatedLog() throws {
        let report = try verifyAfter { log, txn in
            try log.delete(100, in: txn)
            try log.delete(99, in: txn)
        }
        #expect(report.firstProblem?.position == 99)
        #expect(report.firstProblem?.kind == .truncated)
    }

    @Test("a record cut short: malformed")
    func shortRecord() throws {
        let report = try verifyAfter { log, txn in
            let record = try #require(try log.get(3, in: txn))
            try log.put(Array(record.prefix(40)), forKey: 3, in: txn)
        }
        #expect(report.firstProblem?.position == 3)
        #expect(report.firstProblem?.kind == .malformedRecord)
    }

    @Test("a payload that does not decode is named by the caller's check; lastLink is the record before it, as for every problem")
    func undecodablePayload() throws {
        struct NotMine: Error {}
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        try store.append([event("good", 1), event("bad", 2), event("good", 3)])
        let report = try store.verify(payloadCheck: { if $0.type == "bad" { throw NotMine() } })
        #expect(report.firstProblem?.position == 2)
        #expect(report.firstProblem?.kind == .undecodablePayload)
        let firstLink = try store.environment.read { txn -> [UInt8] in
            let log: Database<UInt64, [UInt8]> = try txn.openDatabase("log")
            return Array(try #require(try log.get(1, in: txn))[52..<84])
        }
        #expect(report.recordsChecked == 1)
        #expect(report.lastLink.bytes == firstLink, "lastLink moved past the undecodable record")
    }
}

/// CRC-32C, bit by bit: an independent check of the engine's table version.
func crc32c<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
    }
    return crc ^ 0xFFFF_FFFF
}
