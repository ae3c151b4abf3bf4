import EventLog
import Foundation
import LMDB
import Testing

@Suite("Appending and reading the log")
struct LogAppendTests {
    @Test("100,000 events in batches come back in order after reopening, positions contiguous")
    func appendReopenRead() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        do {
            let store = try EventStore<CountingViews>(path: dir.path)
            for batch in 0..<100 {
                let receipt = try store.append((0..<1000).map {
                    event("test.kind\($0 % 3)", batch * 1000 + $0, at: start.addingTimeInterval(Double(batch)))
                })
                #expect(receipt.positions == UInt64(batch * 1000 + 1)...UInt64(batch * 1000 + 1000))
            }
        }
        let store = try EventStore<CountingViews>(path: dir.path)
        #expect(try store.head() == 100_000)
        var expected: Position = 1
        try store.forEachEvent { recorded in
            #expect(recorded.position == expected)
            let n = Int(expected) - 1
            #expect(recorded.payload == event("x", n).payload)
            #expect(recorded.type == "test.kind\(n % 1000 % 3)")
            #expect(recorded.appendedAt == start.addingTimeInterval(Double(n / 1000)))
            expected += 1
            return true
        }
        #expect(expected == 100_001)
        let total = try store.read { try store.views.counts.total(in: $0) }
        #expect(total == 100_000)
        #expect(try store.verify().isValid)
    }

    @Test("reads by position, range and limit")
    func readsByPosition() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        #expect(try store.head() == 0)
        #expect(try store.event(at: 1) == nil)
        try store.append((0..<50).map { event("t", $0) })
        #expect(try store.event(at: 17)?.payload == event("t", 16).payload)
        #expect(try store.event(at: 51) == nil)
        #expect(try store.events(from: 45).map(\.position) == [45, 46, 47, 48, 49, 50])
        #expect(try store.events(from: 10, limit: 3).map(\.position) == [10, 11, 12])
        var seen: [Position] = []
        try store.forEachEvent(from: 5, through: 8) { seen.append($0.position); return true }
        #expect(seen == [5, 6, 7, 8])
    }

    @Test("the clock stamps events without a time; a stated time is kept to the microsecond")
    func appendTime() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        let fixed = Date(timeIntervalSince1970: 1_800_000_000.25)
        options.clock = { fixed }
        let store = try EventStore<CountingViews>(path: dir.path, options: options)
        let stated = Date(timeIntervalSince1970: 1_700_000_000.123456)
        try store.append([event("t", 1), event("t", 2, at: stated)])
        #expect(try store.event(at: 1)?.appendedAt == fixed)
        #expect(try store.event(at: 2)?.appendedAtMicroseconds == 1_700_000_000_123_456)
    }

    @Test("an invalid event is rejected with a clear error and writes nothing")
    func invalidEventWritesNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        try store.append([event("t", 1)])
        #expect {
            try store.append([event("t", 2), NewEvent(type: "", schemaVersion: 1, payload: [])])
        } throws: { error in
            (error as? EventLogError)?.code == .invalidArgument && "\(error)".contains("event type")
        }
        #expect {
            try store.append([NewEvent(type: String(repeating: "x", count: 256), schemaVersion: 1, payload: [])])
        } throws: { ($0 as? EventLogError)?.code == .invalidArgument }
        #expect(try store.head() == 1)
        #expect(try store.read { try store.views.counts.total(in: $0) } == 1)
    }

    @Test("a write whose closure throws appends nothing and leaves the views alone")
    func throwingWriteWritesNothing() throws {
        struct Refused: Error {}
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        try store.append([event("t", 1)])
        #expect(throws: Refused.self) {
            try store.write { batch in
                try batch.append(event("t", 2))
                try batch.append(event("t", 3))
                throw Refused()
            }
        }
        #expect(try store.head() == 1)
        try store.read { txn throws in
            #expect(try store.views.counts.total(in: txn) == 1)
            #expect(try store.views.bytes.total(in: txn) == 64)
        }
    }

    @Test("opening a missing store without creating it names the path")
    func missingStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = StoreOptions()
        options.createIfMissing = false
        #expect {
            _ = try EventStore<CountingViews>(path: dir.sub("nothing-here"), options: options)
        } throws: { error in
            (error as? EventLogError)?.code == .storeMissing && "\(error)".contains("nothing-here")
        }
    }

    @Test("a store of another format is refused, not misread")
    func incompatibleFormat() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do { _ = try EventStore<CountingViews>(path: dir.path, options: fastOptions()) }
        do {
            let env = try Environment(path: dir.path)
            try env.write { txn in
                let meta: Database<String, [UInt8]> = try txn.openDatabase("meta")
                try meta.put([0, 0, 0, 9], forKey: "format", in: txn)
            }
        }
        #expect {
            _ = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        } throws: { error in
            (error as? EventLogError)?.code == .incompatibleFormat && "\(error)".contains("format 9")
        }
    }

    @Test("the same store cannot be opened twice in one process")
    func openTwice() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        #expect(throws: EnvironmentAlreadyOpenError.self) {
            _ = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        }
        _ = store
    }
}
