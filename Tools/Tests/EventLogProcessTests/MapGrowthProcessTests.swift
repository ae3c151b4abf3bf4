import EventLog
import Foundation
import LMDB
import Testing

/// A map another process grew. The rest of the suite is in
/// `Tests/EventLogTests/MapGrowthTests.swift`.
@Suite("The map grows by itself: another process")
struct MapGrowthProcessTests {
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
}
