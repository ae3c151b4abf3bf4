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

    @Test("a read that must not adopt a map another process grew throws mapResized; a plain read adopts it")
    func readUnlessResized() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        func append(batches: Int) throws {
            let child = try ChildProcess("SyntheticAppender", [
                "append", "--store", dir.path, "--map-size", "\(1 << 20)", "--writer", "1", "--batches", "\(batches)",
                "--batch-size", "50", "--durability", "noSync", "--payload-bytes", "5000",
            ])
            #expect(child.finish().status == 0)
        }
        try append(batches: 1)
        var options = EnvironmentOptions()
        options.mapSize = 1 << 20
        options.durability = .noSync
        let env = try Environment(path: dir.path, options: options)
        try env.readUnlessResized { _ in }
        try append(batches: 40)   // 10 MB: the child grows the map
        // A rebuild's read-ahead thread must not wait for this process's transactions to end.
        #expect(throws: LMDBError.mapResized) { try env.readUnlessResized { _ in } }
        try env.read { _ in }
        try env.readUnlessResized { _ in }
        #expect(env.info().mapSize > 1 << 20)
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
