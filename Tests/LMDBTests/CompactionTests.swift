import Foundation
import LMDB
import Testing

@Suite("Compaction of an environment")
struct EnvironmentCompactionTests {
    /// Whether the file at `path` contains `needle`.
    static func file(_ path: String, contains needle: String) throws -> Bool {
        try Data(contentsOf: URL(fileURLWithPath: path)).firstRange(of: Data(needle.utf8)) != nil
    }

    @Test("deleted values stay in the file's free pages until compaction; after it the file holds the live entries only, smaller, and takes writes with the next transaction id")
    func dropsFreedPages() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let data = (path as NSString).appendingPathComponent("data.mdb")
        do {
            let env = try Environment(path: path)
            let db = try env.write { try $0.createDatabase("things", as: UInt64.self, String.self) }
            try env.write { txn in
                for n: UInt64 in 0..<2_000 { try db.put("value \(n) " + (n % 2 == 0 ? "KEEPME" : "GONEMARKER") + String(repeating: ".", count: 200), forKey: n, in: txn) }
            }
            try env.write { txn in
                for n: UInt64 in stride(from: 1, to: 2_000, by: 2) { try db.delete(n, in: txn) }
            }
            // A few more commits, so that the freed pages are not all reused at once.
            for n: UInt64 in 0..<3 { try env.write { txn in try db.put("later \(n)", forKey: 10_000 + n, in: txn) } }
        }
        #expect(try Self.file(data, contains: "GONEMARKER"), "LMDB reused every freed page: the test proves nothing")
        let before = try FileManager.default.attributesOfItem(atPath: data)[.size] as? Int ?? 0

        var seen: [CompactionStep] = []
        let steps = StepLog()
        let report = try Environment.compact(path: path, beforeSwap: { old, copy in
            let count = { (env: Environment) in
                try env.read { txn in try txn.openDatabase("things", as: UInt64.self, String.self).statistics(in: txn).entries }
            }
            let (a, b) = (try count(old), try count(copy))
            #expect(a == 1_003 && b == 1_003)
        }, progress: { steps.append($0.step) })
        seen = steps.all
        #expect(report.bytesBefore == before)
        #expect(report.bytesAfter < before, "\(report)")
        #expect(!report.removedLeftover)
        #expect(Array(Set(seen)).sorted { $0.order < $1.order } == CompactionStep.allCases, "\(seen)")
        #expect(try !Self.file(data, contains: "GONEMARKER"))
        #expect(try Self.file(data, contains: "KEEPME"))
        #expect(!FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent(Environment.compactionCopyName)))

        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("things", as: UInt64.self, String.self) }
        #expect(env.info().lastTransaction == 1, "the copy's meta page holds transaction 1; an open that changes nothing commits nothing")
        try env.write { txn in try db.put("after", forKey: 20_000, in: txn) }
        #expect(try env.read { txn in (txn.id, try db.get(20_000, in: txn), try db.get(0, in: txn)?.hasPrefix("value 0 KEEPME")) }
            == (2, "after", true))
    }

    @Test("a large value on an overflow page of its own gets a page buffer LMDB recycled from an earlier commit, tail and all; the compacted file has that tail zeroed")
    func overflowTails() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let data = (path as NSString).appendingPathComponent("data.mdb")
        do {
            let env = try Environment(path: path)
            let db = try env.write { try $0.createDatabase("things", as: UInt64.self, String.self) }
            // Pages full of the marker, written and committed: their buffers are recycled.
            try env.write { txn in
                for n: UInt64 in 0..<400 { try db.put(String(repeating: "TAILMARKER", count: 30), forKey: n, in: txn) }
            }
            // Values of 2.5 KB: one overflow page each, from the recycled buffers.
            try env.write { txn in
                for n: UInt64 in 1_000..<1_100 { try db.put(String(repeating: "x", count: 2_500), forKey: n, in: txn) }
            }
            try env.write { txn in
                for n: UInt64 in 0..<400 { try db.delete(n, in: txn) }
            }
        }
        let report = try Environment.compact(path: path, beforeSwap: { _, _ in })
        #expect(report.bytesZeroed > 0, "no overflow page had a stale tail: \(report)")
        #expect(try !Self.file(data, contains: "TAILMARKER"))
        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("things", as: UInt64.self, String.self) }
        #expect(try env.read { txn in try (1_000..<1_100).allSatisfy { try db.get($0, in: txn) == String(repeating: "x", count: 2_500) } })
        #expect(try env.read { txn in try db.statistics(in: txn).entries } == 100)
    }

    @Test("refused while this process has the environment open; a copy left by a killed compaction is removed by the next one and by an open for writing; a throwing check keeps the old file")
    func refusalsAndLeftovers() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let copy = (path as NSString).appendingPathComponent(Environment.compactionCopyName)
        do {
            let env = try Environment(path: path)
            let db = try env.write { try $0.createDatabase("things", as: UInt64.self, String.self) }
            try env.write { txn in try db.put("one", forKey: 1, in: txn) }
            #expect(throws: EnvironmentAlreadyOpenError.self) { try Environment.compact(path: path, beforeSwap: { _, _ in }) }
        }
        struct Refused: Error {}
        let data = try Data(contentsOf: URL(fileURLWithPath: (path as NSString).appendingPathComponent("data.mdb")))
        #expect(throws: Refused.self) { try Environment.compact(path: path, beforeSwap: { _, _ in throw Refused() }) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: (path as NSString).appendingPathComponent("data.mdb"))) == data)
        #expect(!FileManager.default.fileExists(atPath: copy))

        // What a compaction killed before its rename leaves.
        #expect(FileManager.default.createFile(atPath: copy, contents: Data("half a copy".utf8)))
        #expect(try Environment.compact(path: path, beforeSwap: { _, _ in }).removedLeftover)
        #expect(FileManager.default.createFile(atPath: copy, contents: Data("half a copy".utf8)))
        var readOnly = EnvironmentOptions()
        readOnly.readOnly = true
        _ = try Environment(path: path, options: readOnly)
        #expect(FileManager.default.fileExists(atPath: copy), "a read-only open writes nothing")
        _ = try Environment(path: path)
        #expect(!FileManager.default.fileExists(atPath: copy), "an open for writing removes it")
    }
}

/// Steps reported from the compaction's threads.
final class StepLog: @unchecked Sendable {
    private let lock = NSLock()
    private var steps: [CompactionStep] = []

    func append(_ step: CompactionStep) {
        lock.lock()
        steps.append(step)
        lock.unlock()
    }

    var all: [CompactionStep] {
        lock.lock()
        defer { lock.unlock() }
        return steps
    }
}

extension CompactionStep {
    var order: Int { Self.allCases.firstIndex(of: self)! }
}
