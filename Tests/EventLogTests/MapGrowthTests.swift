import EventLog
import Foundation
import LMDB
import Testing

@Suite("The map grows by itself")
struct MapGrowthTests {
    @Test("a store whose map starts at 1 MiB takes 50 MB of appends without an error")
    func growsThrough50MB() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.initialMapSize = 1 << 20
        let store = try EventStore<TwoViews>(path: dir.path, options: options)
        #expect(store.environment.info().mapSize == 1 << 20)
        for b in 0..<100 {
            try store.append((0..<500).map { event("t", b * 500 + $0, size: 1000) })
        }
        let info = store.environment.info()
        #expect(info.mapSize >= 50_000_000)
        #expect(info.usedBytes <= info.mapSize)
        #expect(try store.head() == 50_000)
        #expect(try store.read { try store.views.bytes.total(in: $0) } == 50_000_000)
        #expect(try store.verify().isValid)
    }

    @Test("readers on other threads while the map grows see consistent data")
    func growsUnderReaders() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = fastOptions()
        options.initialMapSize = 1 << 20
        let store = try EventStore<CountingViews>(path: dir.path, options: options)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for b in 0..<40 { try store.append((0..<250).map { event("t", b * 250 + $0, size: 1000) }) }
            }
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<200 {
                        try store.read { txn throws in
                            let head = try store.head(in: txn)
                            #expect(head % 250 == 0)
                            #expect(try store.views.counts.total(in: txn) == head)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.head() == 10_000)
    }
}
