import EventLog
import Foundation
import LMDB
import Testing

/// A store written by format 1, committed under `Fixtures/format-1`. Every
/// later version must read and verify it: it guards the record layout and
/// the chain rule. Regenerate only with a new format, never to make this pass:
/// `EVENTLOG_WRITE_FIXTURE=1 swift test --filter FixtureTests`.
@Suite("The committed format-1 fixture")
struct FixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/format-1").path

    /// The fixture's events: several types, schema versions, sizes (an empty
    /// payload, one past LMDB's overflow size) and fixed times.
    static var events: [NewEvent] {
        let base = Date(timeIntervalSince1970: 1_795_000_000)
        return (0..<200).map { n in
            let size = n == 7 ? 0 : (n == 150 ? 5000 : 20 + n % 90)
            var payload = [UInt8]()
            for i in 0..<size { payload.append(UInt8(truncatingIfNeeded: n &* 31 &+ i)) }
            return NewEvent(type: ["order.placed", "order.shipped", "activity.becameCurrent"][n % 3],
                            schemaVersion: UInt32(1 + n % 2), payload: payload,
                            at: base.addingTimeInterval(Double(n) * 1.5 + 0.000001 * Double(n)))
        }
    }

    @Test("reads back exactly the events it was written with, and verifies")
    func readsAndVerifies() throws {
        if ProcessInfo.processInfo.environment["EVENTLOG_WRITE_FIXTURE"] == "1" { try write() }
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: dir.sub("store"))
        let store = try EventStore<CountingViews>(path: dir.sub("store"), options: fastOptions())
        let report = try store.verify()
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        #expect(report.recordsChecked == 200)
        let read = try store.events()
        let expected = Self.events
        #expect(read.count == expected.count)
        for (got, want) in zip(read, expected) {
            #expect(got.type == want.type)
            #expect(got.schemaVersion == want.schemaVersion)
            #expect(got.payload == want.payload)
            #expect(got.appendedAtMicroseconds == Int64((want.at!.timeIntervalSince1970 * 1_000_000).rounded(.down)))
        }
        // The chain rule itself: the last link as format 1 computes it.
        #expect(report.lastLink.description == Self.lastLinkHex)
        #expect(try store.read { try store.views.counts.total(in: $0) } == 200)
    }

    static let lastLinkHex = "66126df9f911c81088cb2254921dc6f378ee50ab59c960dfa027aac865b6c1ad"

    func write() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.sub("live"), options: fastOptions())
            for chunk in stride(from: 0, to: 200, by: 50) { try store.append(Array(Self.events[chunk..<(chunk + 50)])) }
            try? FileManager.default.removeItem(atPath: Self.fixture)
            try store.environment.copy(to: Self.fixture)
            print("last link:", try store.verify().lastLink)
        }
    }
}

/// `Scripts/verify_log.py` decodes the log from `Docs/LogFormat.md` alone,
/// with Python's `lmdb` package: proof that the document is enough.
@Suite("An independent reader in Python")
struct IndependentReaderTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Scripts/verify_log.py").standardizedFileURL.path

    /// The reader's status and output. These logs are the engine's alone, of
    /// no application: `--no-schema` (an activity store's payloads are decoded
    /// with its schema by the command-line tests, `IndependentDecoderTests`).
    func python(_ store: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.script, store, "--no-schema"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("verifies the fixture and computes the same last link")
    func fixture() throws {
        let (status, output) = try python(FixtureTests.fixture)
        #expect(status == 0, "\(output)")
        #expect(output.contains("ok: 200 records, last link \(FixtureTests.lastLinkHex)"), "\(output)")
    }

    @Test("names the same first bad position as the engine")
    func damaged() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append((0..<40).map { event("t", $0) })
        }
        do {
            let env = try Environment(path: dir.path)
            try env.write { txn in
                let log: Database<UInt64, [UInt8]> = try txn.openDatabase("log")
                var record = try #require(try log.get(23, in: txn))
                record[90] ^= 0x40
                try log.put(record, forKey: 23, in: txn)
            }
        }
        let (status, output) = try python(dir.path)
        #expect(status == 1)
        #expect(output.hasPrefix("position 23: checksumMismatch"), "\(output)")
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        #expect(try store.verify().firstProblem?.position == 23)
    }

    @Test("names the same problem as the engine after the walk: a checkpoint past the head, a missing head", arguments: ["checkpoint", "head"])
    func afterTheWalk(damage: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append((0..<5).map { event("t", $0) })
        }
        do {
            let env = try Environment(path: dir.path)
            try env.write { txn in
                let meta: Database<String, [UInt8]> = try txn.openDatabase("meta")
                if damage == "head" {
                    try meta.delete("head", in: txn)
                } else {
                    try meta.put(Checkpoint(position: 9, version: 1).withEncodedBytes { [UInt8]($0) }, forKey: "checkpoint:test.typeCounts", in: txn)
                }
            }
        }
        let (status, output) = try python(dir.path)
        let expected = damage == "head" ? "position 1: truncated" : "position 6: checkpointAhead"
        #expect(status == 1)
        #expect(output.hasPrefix(expected), "\(output)")
        var options = fastOptions()
        options.readOnly = true   // opened for writing, the store would catch the views up to the head first
        let store = try EventStore<CountingViews>(path: dir.path, options: options)
        let problem = try #require(try store.verify().firstProblem)
        #expect("\(problem)".hasPrefix(expected), "\(problem)")
    }
}
