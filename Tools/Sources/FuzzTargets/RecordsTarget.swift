import ActivityDomain
import Crypto
import EventLog
import Foundation
import LMDB

/// A damaged or forged log record: the input (after a first byte that picks
/// how much of it to repair) replaces the bytes of the last record of a small
/// store, as a flipped disk block or a hand edit would. Then what `eventlog
/// verify` and `eventlog log` do: verify the log with the payload check,
/// read every event and render it as JSON.
///
/// Repairs, so that inputs reach past the checksum: `0` none; `1` the
/// CRC-32C; `2` the payload digest, the chain link and the CRC-32C (a record
/// that is whole but says something else).
///
/// Promises: verifying never throws (a bad record is a report, not an
/// error); reading throws only ``EventLogError``; and a log that verifies
/// holds the original record (same type, version, time and payload, or the
/// payload redacted: the flags byte is the erasure issue's).
enum RecordsTarget {
    struct Store: Sendable {
        let store: ActivityStore
        let last: Position
        let original: [UInt8]
        let previousLink: [UInt8]
        let originalEvent: RecordedEvent
    }

    static let fixture = Fixture { () throws -> Store in
        let store = try ActivityStore(path: Scratch.path("records"), options: FuzzStores.fast).filled(with: FuzzStores.searchableLines)
        let last = try store.head()
        let (original, previous) = try store.eventStore.environment.read { txn in
            let log: Database<[UInt8], [UInt8]> = try txn.openDatabase("log")
            return (try log.get(key(last), in: txn) ?? [], try log.get(key(last - 1), in: txn) ?? [])
        }
        guard let event = try store.eventStore.event(at: last) else { throw FuzzFailure("no record at \(last)") }
        return Store(store: store, last: last, original: original, previousLink: Array(previous[52..<84]), originalEvent: event)
    }

    /// The seed inputs: the original record with each repair.
    static func seeds() throws -> [[UInt8]] {
        let fixture = try fixture.get()
        return [[0] + fixture.original, [2] + fixture.original]
    }

    static func run(_ input: [UInt8]) throws {
        let fixture = try fixture.get()
        guard let mode = input.first else { return }
        let record = repaired(Array(input.dropFirst()), mode: mode % 3, position: fixture.last, previousLink: fixture.previousLink)
        let events = fixture.store.eventStore
        try events.environment.write { txn in
            let log: Database<[UInt8], [UInt8]> = try txn.openDatabase("log")
            try log.put(record, forKey: key(fixture.last), in: txn)
        }
        let report: LogVerification
        do {
            report = try events.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        } catch {
            throw FuzzFailure("verify threw \(type(of: error)): \(error); a bad record must be reported, not thrown")
        }
        var read: RecordedEvent?
        do {
            for event in try events.events(from: 1) {
                _ = try? ActivityEventCatalog.json(of: event)
                read = event
            }
        } catch is EventLogError {
        } catch {
            throw FuzzFailure("reading the log threw \(type(of: error)): \(error), not an EventLogError")
        }
        if report.isValid {
            guard let read, read.position == fixture.last else {
                throw FuzzFailure("the log verifies but its last record does not read back")
            }
            let same = fixture.originalEvent
            guard read.type == same.type, read.schemaVersion == same.schemaVersion,
                  read.appendedAtMicroseconds == same.appendedAtMicroseconds,
                  read.payload == same.payload || read.isRedacted else {
                throw FuzzFailure("a changed record verifies: \(read) instead of \(same)")
            }
        }
    }

    static func key(_ position: Position) -> [UInt8] { withUnsafeBytes(of: position.bigEndian) { Array($0) } }

    /// `record` with the repairs of `mode` (see the type's comment), where
    /// its lengths allow them.
    static func repaired(_ record: [UInt8], mode: UInt8, position: Position, previousLink: [UInt8]) -> [UInt8] {
        guard mode > 0, record.count >= 88 else { return record }
        var record = record
        if mode == 2 {
            let typeLength = Int(record[2]) << 8 | Int(record[3])
            let payloadLength = record[16..<20].reduce(0) { $0 << 8 | Int($1) }
            if record.count == 88 + typeLength + payloadLength {
                let payload = record[(84 + typeLength)..<(84 + typeLength + payloadLength)]
                let digest = Array(SHA256.hash(data: Array(payload)))
                if record[1] & 1 == 0 { record.replaceSubrange(20..<52, with: digest) }
                var linked = previousLink
                linked += withUnsafeBytes(of: position.bigEndian) { Array($0) }
                linked += record[4..<8] + record[8..<16] + record[20..<52] + record[84..<(84 + typeLength)]
                record.replaceSubrange(52..<84, with: Array(SHA256.hash(data: linked)))
            }
        }
        let crc = CRC32C.checksum(record[..<(record.count - 4)])
        record.replaceSubrange((record.count - 4)..., with: withUnsafeBytes(of: crc.bigEndian) { Array($0) })
        return record
    }
}

/// CRC-32C (Castagnoli), a table built from the polynomial: an independent
/// second implementation, used only to repair inputs.
enum CRC32C {
    static let table: [UInt32] = (0..<256).map { byte in
        var crc = UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        return crc
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
