import Crypto
import EventLog
import Foundation
import LMDB
import Testing

@Suite("Snapshots, rebuild, verification by rebuild, time travel")
struct ReplayTests {
    /// A workload with a fixed time per event, so two stores given the same
    /// events hold the same bytes.
    static func workload(_ n: Int, seed: UInt64 = 7) -> [[NewEvent]] {
        var rng = SeededGenerator(seed: seed)
        let base = Date(timeIntervalSince1970: 1_790_000_000)
        var batches: [[NewEvent]] = []
        var i = 0
        while i < n {
            let size = min(n - i, Int.random(in: 1...40, using: &rng))
            batches.append((0..<size).map { k in
                event("t\(Int.random(in: 0..<12, using: &rng))", i + k, size: Int.random(in: 0...300, using: &rng),
                      at: base.addingTimeInterval(Double(i + k)))
            })
            i += size
        }
        return batches
    }

    @Test("a full rebuild reproduces the live views byte for byte")
    func fullRebuildEqualsLive() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        for batch in Self.workload(5000) { try store.append(batch) }
        let comparison = try store.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
        #expect(comparison.report.position == 5000)
        #expect(comparison.report.eventsApplied == 5000)
        let report = try store.rebuild(full: true)
        #expect(report.position == 5000 && report.snapshot == nil)
        #expect(try store.verifyViews(full: true).isEqual)
        // No scratch environment is left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("replay-scratch") }
        #expect(leftovers.isEmpty)
    }

    @Test("a view that drifted from the log is named by verification and repaired by a rebuild")
    func driftDetectedAndRepaired() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
            for batch in Self.workload(800) { try store.append(batch) }
        }
        do {
            let env = try Environment(path: dir.path)
            try env.write { txn in
                let counts: Database<String, UInt64> = try txn.openDatabase("test.typeCounts")
                try counts.put(999, forKey: "t3", in: txn)
            }
        }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        let comparison = try store.verifyViews()
        #expect(comparison.difference?.projection == "test.typeCounts")
        #expect(comparison.difference?.keyDescription == "t3")
        try store.rebuild()
        #expect(try store.verifyViews().isEqual)
        #expect(try store.read { try store.views.counts.total(in: $0) } == 800)
    }

    @Test("a rebuild repairs keys missing, extra, changed (longer and shorter), at either end and in between, and a view emptied whole")
    func rebuildRepairsEveryKindOfDifference() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<IndexedViews>(path: dir.path, options: fastOptions())
            for batch in Self.workload(3000) { try store.append(batch) }
        }
        var reference: [(UInt64, [UInt8])] = []
        do {
            let env = try Environment(path: dir.path)
            try env.write { txn in
                let byPosition: Database<UInt64, [UInt8]> = try txn.openDatabase("test.byPosition")
                reference = try Self.entries(byPosition, in: txn)
                for position in stride(from: UInt64(1), through: 3000, by: 7) { try byPosition.delete(position, in: txn) }
                for position in UInt64(1200)...1600 { try byPosition.delete(position, in: txn) }   // pages emptied
                try byPosition.delete(3000, in: txn)
                try byPosition.put([1, 2, 3], forKey: 0, in: txn)                                  // before the first
                try byPosition.put(Array(repeating: 9, count: 3000), forKey: 5000, in: txn)        // after the last, an overflow page
                for position in stride(from: UInt64(2), through: 3000, by: 11) {
                    try byPosition.put(position % 2 == 0 ? [7] : Array(repeating: 7, count: 900), forKey: position, in: txn)
                }
                let counts: Database<String, UInt64> = try txn.openDatabase("test.typeCounts")
                try counts.removeAll(in: txn)
            }
        }
        let store = try EventStore<IndexedViews>(path: dir.path, options: fastOptions())
        #expect(try !store.verifyViews(full: true).isEqual)
        try store.rebuild(full: true)
        #expect(try store.verifyViews(full: true).isEqual)
        #expect(try store.read { txn in try Self.entries(store.views.byPosition.entries, in: txn) }.elementsEqual(reference) { $0 == $1 })
        #expect(try store.read { try store.views.counts.total(in: $0) } == 3000)
    }

    static func entries(_ db: Database<UInt64, [UInt8]>, in txn: ReadTransaction) throws -> [(UInt64, [UInt8])] {
        var result: [(UInt64, [UInt8])] = []
        let cursor = try db.cursor(in: txn)
        var entry = try cursor.first()
        while let e = entry {
            result.append(e)
            entry = try cursor.next()
        }
        return result
    }

    @Test("a rebuild from a snapshot with a tail equals a full rebuild")
    func snapshotThenTail() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        let batches = Self.workload(3000)
        for batch in batches.prefix(batches.count * 9 / 10) { try store.append(batch) }
        let snapshot = try store.createSnapshot()
        #expect(snapshot.position == (try store.head()))
        #expect(store.verifySnapshot(snapshot))
        for batch in batches.suffix(from: batches.count * 9 / 10) { try store.append(batch) }
        let report = try store.rebuild()
        #expect(report.snapshot == snapshot.position)
        #expect(report.eventsApplied == 3000 - snapshot.position)
        #expect(try store.verifyViews(full: true).isEqual)
        #expect(try store.snapshots().map(\.position) == [snapshot.position])
        #expect(try store.deleteSnapshot(at: snapshot.position))
        #expect(try store.snapshots().isEmpty)
    }

    @Test("a snapshot stamped with another projection version is ignored")
    func otherVersionIgnored() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            for batch in Self.workload(500) { try store.append(batch) }
            try store.createSnapshot()
        }
        let store = try EventStore<CountingViewsV2>(path: dir.path, options: fastOptions())
        #expect(try store.snapshots().count == 1)
        let report = try store.rebuild()
        #expect(report.snapshot == nil)
        #expect(report.eventsApplied == 500)
        #expect(try store.verifyViews(full: true).isEqual)
    }

    @Test("a damaged snapshot fails its digest, and the rebuild falls back to the log")
    func damagedSnapshotFallsBack() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        for batch in Self.workload(1000) { try store.append(batch) }
        let snapshot = try store.createSnapshot()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: snapshot.path))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: snapshot.path))
        #expect(!store.verifySnapshot(snapshot))
        let report = try store.rebuild()
        #expect(report.snapshot == nil)
        #expect(report.damagedSnapshots == [snapshot.position])
        #expect(try store.verifyViews(full: true).isEqual)
        #expect(try store.read { try store.views.counts.total(in: $0) } == 1000)
    }

    @Test("a snapshot damaged anywhere in its lengths and names, or resealed over bad keys, is skipped, never an error")
    func damagedLengthsAreSkipped() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        for batch in Self.workload(200) { try store.append(batch) }
        let snapshot = try store.createSnapshot()
        let url = URL(fileURLWithPath: snapshot.path)
        let original = try Data(contentsOf: url)
        // Each byte of the header and the first entries: length fields, names, counts.
        for offset in stride(from: 8, to: min(original.count - 32, 160), by: 1) {
            var bytes = original
            bytes[offset] ^= 0x80
            try bytes.write(to: url)
            // Skipped as damaged, or (a stamp or position changed) not a candidate at all.
            let report = try store.rebuild()
            #expect(report.snapshot == nil, "byte \(offset)")
        }
        // A whole, sealed file that holds an empty key: not loadable, so skipped.
        var forged = [UInt8](original.prefix(original.count - 32))
        func integer(at offset: Int, _ size: Int) -> Int { forged[offset..<(offset + size)].reduce(0) { $0 << 8 | Int($1) } }
        var offset = 48   // past the magic, the position and the link (SnapshotFile's layout)
        let projections = integer(at: offset, 4)
        offset += 4
        for _ in 0..<projections {
            offset += 2 + integer(at: offset, 2) + 4   // name, version
            let databases = integer(at: offset, 4)
            offset += 4
            for _ in 0..<databases { offset += 2 + integer(at: offset, 2) }
        }
        offset += 8   // the first database's entry count; then its first key's length
        let keyLength = integer(at: offset, 4)
        #expect(keyLength > 0)
        forged.replaceSubrange(offset..<(offset + 4 + keyLength), with: [0, 0, 0, 0])
        forged += Array(SHA256.hash(data: forged))
        try Data(forged).write(to: url)
        let report = try store.rebuild()
        #expect(report.snapshot == nil && report.damagedSnapshots == [snapshot.position])
        #expect(try store.verifyViews(full: true).isEqual)
    }

    @Test("time travel to position P equals a store that only ever saw 1…P")
    func timeTravel() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let batches = Self.workload(2000)
        var cut: Position = 0
        do {
            let full = try EventStore<TwoViews>(path: dir.sub("full"), options: fastOptions())
            let partial = try EventStore<TwoViews>(path: dir.sub("partial"), options: fastOptions())
            for (i, batch) in batches.enumerated() {
                try full.append(batch)
                if i < batches.count / 2 { try partial.append(batch) }
                if i == batches.count / 4 { try full.createSnapshot() }
            }
            cut = try partial.head()
            let report = try full.replay(through: cut, into: dir.sub("travelled"))
            #expect(report.snapshot != nil, "the snapshot before P should be used")
            #expect(report.position == cut)
        }
        do {
            let travelled = try EventStore<TwoViews>(path: dir.sub("travelled"), options: fastOptions())
            #expect(try travelled.head() == cut)
            #expect(try travelled.verify().isValid)
            #expect(try travelled.verifyViews(full: true).isEqual)
            #expect {
                try travelled.replay(through: cut + 1, into: dir.sub("past-the-head"))
            } throws: { ($0 as? EventLogError)?.code == .invalidArgument }
        }
        try assertSameDatabases(dir.sub("partial"), dir.sub("travelled"),
                                names: ["log", "test.typeCounts", "test.payloadBytes"])
    }

    @Test("the snapshot policy takes snapshots as the log grows and keeps the newest")
    func automaticSnapshots() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.snapshotPolicy = SnapshotPolicy(every: 1000, keep: 2)
        let store = try EventStore<TwoViews>(path: dir.path, options: options)
        for b in 0..<10 {
            try store.append((0..<500).map { event("t", b * 500 + $0) })
            // One at a time: wait for a snapshot the commit started (generously: a slow machine is not a failure).
            let deadline = Date().addingTimeInterval(60)
            while store.isSnapshotting && Date() < deadline { usleep(2000) }
        }
        let positions = try store.snapshots().map(\.position)
        #expect(positions.count == 2)
        #expect(positions.last == 5000)
        #expect(try store.snapshots().allSatisfy { store.verifySnapshot($0) })
    }
}

/// Compares named databases of two stores entry by entry.
func assertSameDatabases(_ a: String, _ b: String, names: [String]) throws {
    let left = try Environment(path: a), right = try Environment(path: b)
    for name in names {
        let entries: [[([UInt8], [UInt8])]] = try [left, right].map { env in
            try env.read { txn in
                let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
                let cursor = try db.cursor(in: txn)
                var out: [([UInt8], [UInt8])] = []
                var entry = try cursor.first()
                while let e = entry { out.append(e); entry = try cursor.next() }
                return out
            }
        }
        #expect(entries[0].count == entries[1].count, "\(name): \(entries[0].count) vs \(entries[1].count) entries")
        #expect(entries[0].elementsEqual(entries[1]) { $0.0 == $1.0 && $0.1 == $1.1 }, "\(name) differs")
    }
}

/// A projection that opens a database it does not list.
struct Forgetful: Projection {
    let listed: Database<String, UInt64>
    var name: String { "test.forgetful" }
    var version: UInt32 { 1 }
    var databaseNames: [String] { ["test.forgetful.listed"] }
    init(openingIn txn: WriteTransaction) throws {
        listed = try txn.createDatabase("test.forgetful.listed")
        _ = try txn.createDatabase("test.forgetful.unlisted", as: String.self, UInt64.self)
    }
    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter { ClosureProjectionWriter { _ in } }
}

struct ForgetfulViews: ProjectionSet {
    let forgetful: Forgetful
    init(openingIn txn: WriteTransaction) throws { forgetful = try Forgetful(openingIn: txn) }
    var all: [any Projection] { [forgetful] }
}

@Suite("Projections list every database they own")
struct DatabaseListingTests {
    @Test("a rebuild refuses a projection set that opens a database no projection lists")
    func unlistedDatabase() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<ForgetfulViews>(path: dir.path, options: fastOptions())
        try store.append([event("t", 1)])
        #expect {
            try store.rebuild()
        } throws: { error in
            (error as? EventLogError)?.code == .invalidArgument && "\(error)".contains("test.forgetful.unlisted")
        }
    }
}

/// Every event's payload by position: a view of many pages, for rebuilds that repair it.
struct PayloadByPosition: Projection {
    let entries: Database<UInt64, [UInt8]>
    var name: String { "test.byPosition" }
    var version: UInt32 { 1 }
    var databaseNames: [String] { ["test.byPosition"] }
    init(openingIn txn: WriteTransaction) throws { entries = try txn.createDatabase("test.byPosition") }
    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in try entries.put(event.payload, forKey: event.position, in: txn) }
    }
}

struct IndexedViews: ProjectionSet {
    let counts: TypeCounts
    let byPosition: PayloadByPosition
    init(openingIn txn: WriteTransaction) throws {
        counts = try TypeCounts(openingIn: txn)
        byPosition = try PayloadByPosition(openingIn: txn)
    }
    var all: [any Projection] { [counts, byPosition] }
}
