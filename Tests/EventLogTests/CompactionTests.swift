import EventLog
import Foundation
import LMDB
import Testing

@Suite("Compacting an event store")
struct StoreCompactionTests {
    @Test("compact keeps the log and views, reports the head and sizes; refused while the store is open in this process, on a missing store and on an LMDB environment without a log")
    func compact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.sub("store")
        let head: Position
        do {
            let store = try EventStore<CountingViews>(path: path, options: fastOptions())
            for n in 0..<50 { try store.append((0..<20).map { event("test.happened", n * 20 + $0, size: 300) }) }
            head = try store.head()
            #expect {
                try EventStore<CountingViews>.compact(path: path)
            } throws: { ($0 as? EventLogError)?.code == .storeBusy && "\($0)".contains("already open in this process") }
        }
        let result = try EventStore<CountingViews>.compact(path: path, options: fastOptions())
        #expect(result.head == head && result.bytesAfter <= result.bytesBefore && result.removed.isEmpty, "\(result)")
        let store = try EventStore<CountingViews>(path: path, options: fastOptions())
        #expect(try store.head() == head)
        #expect(try store.verify().isValid)
        #expect(try store.verifyViews(full: true).isEqual)
        try store.append([event("test.happened", 1_000)])
        #expect(try store.head() == head + 1)

        #expect {
            try EventStore<CountingViews>.compact(path: dir.sub("nothing"))
        } throws: { ($0 as? EventLogError)?.code == .storeMissing }
        let plain = dir.sub("plain")
        do {
            let env = try Environment(path: plain)
            let db = try env.write { try $0.createDatabase("other", as: UInt64.self, String.self) }
            try env.write { try db.put("x", forKey: 1, in: $0) }
        }
        #expect {
            try EventStore<CountingViews>.compact(path: plain)
        } throws: { ($0 as? EventLogError)?.code == .storeMissing && "\($0)".contains("without an event log") }
        #expect(!FileManager.default.fileExists(atPath: plain + "/" + Environment.compactionCopyName))
    }
}
