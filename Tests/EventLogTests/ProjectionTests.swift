import EventLog
import Foundation
import LMDB
import Testing

@Suite("Projections and their checkpoints")
struct ProjectionTests {
    @Test("every projection applies every event in the append's transaction; checkpoints follow the head")
    func checkpointsFollowHead() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        try store.append([event("a", 1), event("b", 2), event("a", 3)])
        try store.read { txn throws in
            #expect(try store.views.counts.counts.get("a", in: txn) == 2)
            #expect(try store.views.bytes.total(in: txn) == 192)
        }
        #expect(try store.checkpoint(of: "test.typeCounts") == Checkpoint(position: 3, version: 1))
        #expect(try store.checkpoint(of: "test.payloadBytes") == Checkpoint(position: 3, version: 1))
    }

    @Test("a projection added later catches up on open, in several transactions")
    func addedProjectionCatchesUp() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            for b in 0..<25 { try store.append((0..<1000).map { event("t", b * 1000 + $0) }) }
        }
        var options = fastOptions()
        options.catchUpChunk = 3000
        let store = try EventStore<TwoViews>(path: dir.path, options: options)
        try store.read { txn throws in
            #expect(try store.views.bytes.total(in: txn) == 25_000 * 64)
            #expect(try store.views.counts.total(in: txn) == 25_000)
        }
        #expect(try store.checkpoint(of: "test.payloadBytes")?.position == 25_000)
    }

    @Test("a projection whose version changed is rebuilt from position 1, not applied twice")
    func changedVersionRebuilds() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append((0..<500).map { event("t", $0) })
        }
        let store = try EventStore<CountingViewsV2>(path: dir.path, options: fastOptions())
        #expect(try store.read { try store.views.counts.total(in: $0) } == 500)
        #expect(try store.checkpoint(of: "test.typeCounts") == Checkpoint(position: 500, version: 2))
    }

    @Test("a projection left behind by another writer catches up before the next append")
    func laggingProjectionCatchesUpOnWrite() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
            try store.append([event("t", 1)])
        }
        do {
            // An older build without the byte-count projection appends 10 events.
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append((2...11).map { event("t", $0) })
        }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        try store.append([event("t", 12)])
        #expect(try store.read { try store.views.bytes.total(in: $0) } == 12 * 64)
    }
}
