@testable import EventLog
import Foundation
import LMDB
import Testing

/// Views whose events belong to the owner named by the payload's first
/// bytes, up to a colon (`u3:…`): for the dictionary trainer.
struct OwnedViews: ProjectionSet {
    let counts: TypeCounts
    init(openingIn txn: WriteTransaction) throws { counts = try TypeCounts(openingIn: txn) }
    var all: [any Projection] { [counts] }

    static func dictionaryOwner(of event: RecordedEvent) -> [UInt8]? {
        guard let colon = event.payload.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return Array(event.payload[..<colon])
    }
}

/// A payload of `owner`'s, in words several owners share, with `own` in it.
func ownedPayload(_ owner: String, _ n: Int, own: String = "", size: Int = 600) -> [UInt8] {
    let words = ["coffee", "latte", "order", "shipped", "domain", "attribute", "keywords", "title", "beans", "espresso"]
    var text = "\(owner):\(n) \(own) "
    var i = n
    while text.utf8.count < size {
        text += words[i % words.count] + (i % 3 == 0 ? " \(own) " : " ")
        i = (i * 7 + 3) % 1_000_003
    }
    return Array(text.utf8)
}

@Suite("Compressed payloads: the codec and its blocks")
struct CompressedPayloadTests {
    func roundTrip(_ payload: [UInt8], dictionary: ZstdDictionary?) throws -> (stored: [UInt8], read: [UInt8]) {
        let stored = try #require(try payload.withUnsafeBytes { try CompressedPayload.encode($0, dictionary: dictionary) })
        let read = try stored.withUnsafeBytes { raw -> [UInt8] in
            let parsed = try CompressedPayload(raw, payloadLength: payload.count)
            #expect(parsed.dictionaryID == (dictionary?.id ?? 0))
            var out = [UInt8](repeating: 0, count: payload.count)
            try out.withUnsafeMutableBytes { try parsed.decompress(blocks: 0..<parsed.blockCount, into: $0, dictionary: dictionary) }
            return out
        }
        return (stored, read)
    }

    @Test("a payload of one block and one of several decompress to themselves; blocks decompress alone")
    func blocks() throws {
        let small = ownedPayload("u1", 1, size: 300)
        #expect(try roundTrip(small, dictionary: nil).read == small)
        let large = ownedPayload("u1", 2, size: 20_000)
        let (stored, read) = try roundTrip(large, dictionary: nil)
        #expect(read == large)
        #expect(stored.count < large.count / 2)
        #expect(stored[0] == 0 && stored[1] == CompressedPayload.blockShift)
        try stored.withUnsafeBytes { raw in
            let parsed = try CompressedPayload(raw, payloadLength: large.count)
            #expect(parsed.blockCount == 3)
            // Bytes 9,000..<9,100 lie in block 1 alone.
            let blocks = parsed.blocks(covering: 9_000..<9_100)
            #expect(blocks == 1..<2)
            var out = [UInt8](repeating: 0, count: parsed.span(ofBlock: 1).count)
            try out.withUnsafeMutableBytes { try parsed.decompress(blocks: blocks, into: $0, dictionary: nil) }
            #expect(out == Array(large[parsed.span(ofBlock: 1)]))
        }
    }

    @Test("incompressible or tiny payloads stay as they are; malformed stored bytes are errors, never crashes")
    func notWorthIt() throws {
        var random = SystemRandomNumberGenerator()
        let noise = (0..<500).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(try noise.withUnsafeBytes { try CompressedPayload.encode($0, dictionary: nil) } == nil)
        #expect(try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try CompressedPayload.encode($0, dictionary: nil) } == nil)
        for bad in [[], [0x80], [0, 3], [0, 13], [0, 13, 0x28, 0xb5]] as [[UInt8]] {
            #expect(throws: ZstdError.self) {
                try bad.withUnsafeBytes { raw in
                    let parsed = try CompressedPayload(raw, payloadLength: 100)
                    var out = [UInt8](repeating: 0, count: 100)
                    try out.withUnsafeMutableBytes { try parsed.decompress(blocks: 0..<parsed.blockCount, into: $0, dictionary: nil) }
                }
            }
        }
    }

    @Test("a dictionary keeps only runs of bytes that three owners' samples hold")
    func sharedRunsOnly() throws {
        var samples: [DictionaryTrainer.Sample] = []
        for owner in ["u1", "u2", "u3", "u4"] {
            for n in 0..<60 {
                samples.append(.init(owner: Array(owner.utf8), payload: ownedPayload(owner, n, own: owner == "u1" ? "ZQXSECRETMARKER" : "")))
            }
        }
        // "pairtext" written by two owners only.
        for owner in ["u2", "u3"] {
            for n in 0..<60 { samples.append(.init(owner: Array(owner.utf8), payload: ownedPayload(owner, n, own: "PAIRONLYTEXT"))) }
        }
        // Two owners' samples make no dictionary: no run is in three owners' samples.
        #expect(DictionaryTrainer.train(samples.filter { $0.owner != Array("u3".utf8) && $0.owner != Array("u4".utf8) }, id: 7) == nil)
        let bytes = try #require(DictionaryTrainer.train(samples, id: 7))
        #expect(Zstd.dictionaryID(bytes) == 7)
        #expect(!bytes.contains(subsequence: Array("ZQXSECRETMARKER".utf8)))
        #expect(!bytes.contains(subsequence: Array("SECRETMA".utf8)))
        #expect(!bytes.contains(subsequence: Array("PAIRONLYTEXT".utf8)))
        #expect(bytes.contains(subsequence: Array("espresso".utf8)), "words every owner writes are kept")
        // The same samples, trained without the filter, hold the marker: the check above can fail.
        let unfiltered = try #require(Zstd.train(samples: samples.map(\.payload), capacity: DictionaryTrainer.capacity))
        #expect(unfiltered.contains(subsequence: Array("ZQXSECRETMARKER".utf8)))
        // And it compresses.
        let dictionary = try ZstdDictionary(id: 7, bytes: bytes)
        let payload = ownedPayload("u9", 1234, size: 400)
        let with = try #require(try payload.withUnsafeBytes { try CompressedPayload.encode($0, dictionary: dictionary) })
        let without = try payload.withUnsafeBytes { try CompressedPayload.encode($0, dictionary: nil) }
        #expect(with.count < (without?.count ?? payload.count))
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

@Suite("A compressed log")
struct CompressedLogTests {
    static func events(_ count: Int, from start: Int = 0, size: Int = 600) -> [NewEvent] {
        (start..<(start + count)).map { n in
            NewEvent(type: "order.placed", schemaVersion: 1, payload: ownedPayload("u\(n % 5)", n, size: n % 50 == 0 ? 30_000 : size),
                     at: Date(timeIntervalSince1970: 1_795_000_000 + Double(n)))
        }
    }

    @Test("records are stored compressed, with a dictionary once trained; they read back, verify, and keep their links")
    func compressesAndVerifies() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.dictionaryTrainingBytes = nil
        let store = try EventStore<OwnedViews>(path: dir.path, options: options)
        let first = Self.events(300)
        try store.append(first)
        let id = try #require(try store.trainDictionary())
        #expect(id == 1)
        let second = Self.events(300, from: 300)
        try store.append(second)
        let read = try store.events()
        #expect(read.map(\.payload) == (first + second).map(\.payload))
        let report = try store.verify()
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        let size = try store.logSize()
        #expect(size.records == 600 && size.compressedRecords == 600)
        #expect(size.dictionaries == 1)
        #expect(Double(size.storedBytes) < 0.6 * Double(size.rawBytes), "\(size)")
        // The later records name the dictionary; a record read as stored reads back through it.
        let record = try #require(try store.record(at: 400))
        #expect(record.isCompressed && record.dictionaryID == 1)
        #expect(try record.payload == second[99].payload)
        #expect(try store.record(at: 10)?.dictionaryID == 0)
        // A part of a large payload, read alone.
        let large = try store.environment.read { txn in
            try store.logReader(in: txn).withPayloadBytes(at: 351, 20_000..<20_050) { [UInt8]($0) }
        }
        #expect(large == Array(second[50].payload[20_000..<20_050]))
    }

    @Test("parts of payloads read in one transaction are their bytes, however they are asked (blocks kept for the next reads)")
    func partsInOneTransaction() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.dictionaryTrainingBytes = nil
        let store = try EventStore<OwnedViews>(path: dir.path, options: options)
        let events = Self.events(120)   // 1 and 51 and 101 are 30,000 bytes: four blocks each
        try store.append(events)
        let block = 1 << Int(CompressedPayload.blockShift)
        var ranges: [(Position, Range<Int>)] = []
        for position: Position in [1, 2, 51, 2, 1, 101, 51, 1] {
            let count = events[Int(position) - 1].payload.count
            ranges += [(position, 0..<1), (position, 0..<count), (position, (count - 10)..<count), (position, 5..<5)]
            if count > 2 * block {
                ranges += [(position, (block - 3)..<(block + 3)), (position, 100..<(2 * block + 7)), (position, block..<(2 * block))]
            }
        }
        try store.environment.read { txn in
            let reader = store.logReader(in: txn)
            for (position, range) in ranges + ranges.reversed() {
                let same = try reader.withPayloadBytes(at: position, range) { [UInt8]($0) } == Array(events[Int(position) - 1].payload[range])
                #expect(same, "position \(position), bytes \(range)")
            }
        }
        // A record redacted in the transaction that read it reads as absent, its blocks kept or not.
        _ = try store.write { batch in
            let reader = store.logReader(in: batch.transaction)
            #expect(try reader.withPayloadBytes(at: 51, 10..<20) { [UInt8]($0) } == Array(events[50].payload[10..<20]))
            _ = try batch.redact(PositionRanges([51]))
            #expect(try reader.withPayloadBytes(at: 51, 10..<20) { [UInt8]($0) } == nil)
            #expect(try reader.withPayloadBytes(at: 1, 10..<20) { [UInt8]($0) } == Array(events[0].payload[10..<20]))
        }
    }

    @Test("a record stored from another store's bytes (a follower) needs the dictionary it names, and takes it along")
    func followerTakesDictionaries() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.dictionaryTrainingBytes = nil
        let leader = try EventStore<OwnedViews>(path: dir.sub("leader"), options: options)
        try leader.append(Self.events(200))
        try #require(try leader.trainDictionary() == 1)
        try leader.append(Self.events(50, from: 200))
        let records = try leader.records(after: 0, limit: 1_000, maxBytes: .max)
        let follower = try EventStore<OwnedViews>(path: dir.sub("follower"), options: options)
        #expect(try follower.missingDictionaries(of: records) == [1])
        #expect(throws: EventLogError.self) { try follower.appendRecords(records) }
        #expect(try follower.head() == 0)
        let dictionary = try #require(try leader.dictionary(1))
        try follower.appendRecords(records, dictionaries: [(1, dictionary)])
        #expect(try follower.verify().lastLink == leader.verify().lastLink)
        #expect(try follower.events().map(\.payload) == leader.events().map(\.payload))
        #expect(try follower.missingDictionaries(of: records).isEmpty)
    }

    @Test("the store trains a dictionary by itself once enough bytes were written")
    func trainsByItself() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.dictionaryTrainingBytes = 100_000
        let store = try EventStore<OwnedViews>(path: dir.path, options: options)
        for chunk in 0..<5 { try await store.append(Self.events(100, from: chunk * 100)) }
        var size = try store.logSize()
        // Training runs beside the writer: wait for it (up to 2 minutes on a loaded machine; at once when it is done).
        for _ in 0..<2_400 where size.dictionaries == 0 {
            try await Task.sleep(for: .milliseconds(50))
            size = try store.logSize()
        }
        #expect(size.dictionaries == 1)
        try await store.append(Self.events(10, from: 500))
        #expect(try store.record(at: 510)?.dictionaryID == 1)
        #expect(try store.verify().isValid)
    }

    @Test("compact rewrites a store of format 1 in format 2: compressed, same links, fewer bytes")
    func compactRewritesFormat1() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.copyItem(atPath: FixtureTests.fixture, toPath: dir.sub("store"))
        let rewrite = try EventStore<CountingViews>.rewriteRecordsCompact(path: dir.sub("store"), options: fastOptions())
        #expect(rewrite.recordsRewritten > 0)
        #expect(rewrite.storedBytesAfter < rewrite.storedBytesBefore)
        let store = try EventStore<CountingViews>(path: dir.sub("store"), options: fastOptions())
        let report = try store.verify()
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        #expect(report.lastLink.description == FixtureTests.lastLinkHex)
        #expect(try store.events().map(\.payload) == FixtureTests.events.map(\.payload))
        #expect(try store.record(at: 151)?.isCompressed == true)
    }

    @Test("verify finds a flipped byte in a compressed payload, and names the position")
    func damagedCompressedPayload() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.dictionaryTrainingBytes = nil
        do {
            let store = try EventStore<OwnedViews>(path: dir.path, options: options)
            try store.append(Self.events(40))
            try #require(try store.record(at: 23)?.isCompressed == true)
        }
        let env = try Environment(path: dir.path)
        try env.write { txn in
            let log: Database<UInt64, [UInt8]> = try txn.openDatabase("log")
            var record = try #require(try log.get(23, in: txn))
            record[record.count - 20] ^= 0x40
            // The checksum made to fit, so that only the payload is wrong.
            let crc = record[0..<(record.count - 4)].withUnsafeBytes { CRC32C.checksum($0) }
            record.replaceSubrange((record.count - 4)..., with: withUnsafeBytes(of: crc.bigEndian) { Array($0) })
            try log.put(record, forKey: 23, in: txn)
        }
        env.close()
        let store = try EventStore<OwnedViews>(path: dir.path, options: options)
        let report = try store.verify()
        #expect(report.firstProblem?.position == 23)
        #expect([.payloadDigestMismatch, .malformedRecord].contains(report.firstProblem?.kind))
    }
}

/// A store of format 2, committed under `Fixtures/format-2`: records
/// compressed without a dictionary (the first 200), a dictionary, and
/// records compressed with it (the next 100). Every later version must read
/// and verify it. Regenerate only with a new format:
/// `EVENTLOG_WRITE_FIXTURE=1 swift test --filter Format2FixtureTests`.
@Suite("The committed format-2 fixture")
struct Format2FixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/format-2").path

    static var events: [NewEvent] { CompressedLogTests.events(200) + CompressedLogTests.events(100, from: 200) }

    func write() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            var options = fastOptions()
            options.dictionaryTrainingBytes = nil
            let store = try EventStore<OwnedViews>(path: dir.path, options: options)
            try store.append(Array(Self.events[0..<200]))
            try #require(try store.trainDictionary() == 1)
            try store.append(Array(Self.events[200...]))
            try? FileManager.default.removeItem(atPath: Self.fixture)
            try store.environment.copy(to: Self.fixture)
            print("last link:", try store.verify().lastLink)
        }
    }

    @Test("reads back exactly the events it was written with, and verifies")
    func readsAndVerifies() throws {
        if ProcessInfo.processInfo.environment["EVENTLOG_WRITE_FIXTURE"] == "1" { try write() }
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: dir.sub("store"))
        let store = try EventStore<OwnedViews>(path: dir.sub("store"), options: fastOptions())
        let report = try store.verify()
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        #expect(report.recordsChecked == 300)
        #expect(try store.events().map(\.payload) == Self.events.map(\.payload))
        #expect(try store.record(at: 250)?.dictionaryID == 1)
        #expect(try store.logSize().compressedRecords == 300)
        #expect(try store.read { try store.views.counts.total(in: $0) } == 300)
    }

    @Test("Scripts/verify_log.py decodes every record (decompressing with the dictionary) and computes the same last link")
    func python() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: dir.sub("store"))
        let store = try EventStore<OwnedViews>(path: dir.sub("store"), options: fastOptions())
        let link = try store.verify().lastLink
        let (status, output) = try IndependentReaderTests().python(Self.fixture)
        #expect(status == 0, "\(output)")
        #expect(output.contains("ok: 300 records, last link \(link)"), "\(output)")
        #expect(output.contains("300 records compressed, 1 dictionaries"), "\(output)")
    }
}
