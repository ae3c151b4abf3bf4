import EventLog
import Foundation
import LMDB
import Testing

/// Only the payload-bytes projection: a build without `test.typeCounts`,
/// whose appends leave that view behind.
struct PayloadOnlyViews: ProjectionSet {
    let bytes: PayloadBytes
    init(openingIn txn: WriteTransaction) throws { bytes = try PayloadBytes(openingIn: txn) }
    var all: [any Projection] { [bytes] }
}

@Suite("Read-only opening")
struct ReadOnlyTests {
    func readOnly(servingLaggingViews: Bool = false) -> StoreOptions {
        var options = fastOptions()
        options.readOnly = true
        options.servesLaggingViews = servingLaggingViews
        return options
    }

    @Test("a read-only open reads the log and views, refuses a write, and leaves data.mdb byte for byte as it was")
    func writesNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append((1...5).map { event("test.happened", $0) })
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.sub("data.mdb")))
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: readOnly())
            #expect(try store.head() == 5)
            #expect(try store.read { try store.views.counts.total(in: $0) } == 5)
            #expect(try store.verify().isValid)
            #expect(try store.viewStatus().isCurrent)
            #expect {
                try store.append([event("test.happened", 6)])
            } throws: { error in
                (error as? EventLogError)?.code == .invalidArgument && "\(error)".contains("read-only")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.sub("data.mdb"))) == before)
    }

    @Test("a read-only open of a directory without a store is storeMissing and creates nothing")
    func missingStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        #expect {
            _ = try EventStore<CountingViews>(path: dir.sub("nothing"), options: readOnly())
        } throws: { error in
            (error as? EventLogError)?.code == .storeMissing
        }
        #expect(!FileManager.default.fileExists(atPath: dir.sub("nothing")))
    }

    @Test("lagging views: a read says which view is behind and by how much, serves it only when asked, and nothing catches up")
    func laggingViews() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append((1...5).map { event("test.happened", $0) })
        }
        do {
            // Another build, without the counts projection, appends three more.
            let store = try EventStore<PayloadOnlyViews>(path: dir.path, options: fastOptions())
            try store.append((6...8).map { event("test.happened", $0) })
        }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: readOnly())
            let status = try store.viewStatus()
            #expect(!status.isCurrent && !status.hasOtherVersions)
            #expect(status.projections.map(\.eventsBehind) == [3])
            #expect(status.projections.map(\.checkpoint) == [5])
            #expect("\(status)" == "projection test.typeCounts is 3 events behind the log (applied through 5, head 8)")
            #expect {
                try store.read { try store.views.counts.total(in: $0) }
            } throws: { error in
                let error = error as? EventLogError
                return error?.code == .viewsStale && error?.position == 5
                    && error!.message.contains("test.typeCounts is 3 events behind") && error!.message.contains("replay")
            }
            // The log itself is read as ever.
            #expect(try store.head() == 8)
            #expect(try store.events().count == 8)
            #expect(try store.verify().isValid)
        }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: readOnly(servingLaggingViews: true))
            #expect(try store.read { try store.views.counts.total(in: $0) } == 5, "served as of its checkpoint")
            #expect(try store.checkpoint(of: "test.typeCounts") == Checkpoint(position: 5, version: 1), "a read-only open caught it up")
        }
        // Opened for writing, the view catches up as before.
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        #expect(try store.read { try store.views.counts.total(in: $0) } == 8)
    }

    @Test("views built by another projection version are never served and never rebuilt by a read-only open")
    func otherVersion() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append((1...5).map { event("test.happened", $0) })
        }
        let store = try EventStore<CountingViewsV2>(path: dir.path, options: readOnly(servingLaggingViews: true))
        let status = try store.viewStatus()
        #expect(status.hasOtherVersions && status.projections.map(\.eventsBehind) == [0])
        #expect {
            try store.read { try store.views.counts.total(in: $0) }
        } throws: { error in
            (error as? EventLogError)?.code == .viewsStale && "\(error)".contains("built by version 1, this code's is 2")
        }
        #expect(try store.checkpoint(of: "test.typeCounts") == Checkpoint(position: 5, version: 1))
    }

    @Test("a projection database the store lacks is viewsStale on a read-only open, not created")
    func missingProjectionDatabase() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append([event("test.happened", 1)])
        }
        #expect {
            _ = try EventStore<TwoViews>(path: dir.path, options: readOnly())
        } throws: { error in
            (error as? EventLogError)?.code == .viewsStale && "\(error)".contains("test.payloadBytes")
        }
    }
}

@Suite("Meta records")
struct MetaRecordTests {
    /// Stores `bytes` under `key` of the engine's database `name`, behind the engine's back.
    func damage(_ dir: TemporaryDirectory, _ name: String, _ key: String, _ bytes: [UInt8]) throws {
        let env = try Environment(path: dir.path)
        try env.write { txn in
            let db: Database<String, [UInt8]> = try txn.openDatabase(name)
            try db.put(bytes, forKey: key, in: txn)
        }
    }

    func isCorrupt(_ error: any Error, key: String) -> Bool {
        guard let error = error as? EventLogError else { return false }
        return error.code == .corrupt && error.key == key && "\(error)".contains("\"\(key)\"")
    }

    @Test("a checkpoint of the wrong length is a corrupt store naming the key; the view is not replayed onto")
    func malformedCheckpoint() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append((1...5).map { event("test.happened", $0) })
        }
        try damage(dir, "meta", "checkpoint:test.typeCounts", [0, 0, 0, 0, 0, 0, 0])
        #expect {
            _ = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        } throws: { isCorrupt($0, key: "checkpoint:test.typeCounts") && "\($0)".contains("7 stored bytes") }
        let env = try Environment(path: dir.path)
        let counts = try env.read { txn -> UInt64? in
            let db: Database<String, UInt64> = try txn.openDatabase("test.typeCounts")
            return try db.get("test.happened", in: txn)
        }
        #expect(counts == 5)
    }

    @Test("a head, a format or an idempotency entry of the wrong length is a corrupt store naming the key")
    func malformedMeta() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append([event("test.happened", 1)], WriteOptions(idempotencyKey: "first"))
        }
        try damage(dir, "idempotency", "request-7", Array(repeating: 0, count: 15))
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            #expect {
                try store.append([event("test.happened", 2)], WriteOptions(idempotencyKey: "request-7"))
            } throws: { isCorrupt($0, key: "request-7") }
            #expect(try store.head() == 1, "the rejected write appended nothing")
            let retry = try store.append([event("test.happened", 2)], WriteOptions(idempotencyKey: "first"))
            #expect(retry.isRetry && retry.positions == 1...1)
        }
        try damage(dir, "meta", "head", Array(repeating: 0, count: 39))
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            #expect { try store.verify() } throws: { isCorrupt($0, key: "head") }
        }
        try damage(dir, "meta", "format", [0, 0, 1])
        #expect {
            _ = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        } throws: { isCorrupt($0, key: "format") }
    }

    @Test("the typed meta records keep the byte layout of Docs/LogFormat.md")
    func layout() throws {
        let bytes = Checkpoint(position: 0x0102, version: 7).withEncodedBytes { [UInt8]($0) }
        #expect(bytes == [0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 7])
        #expect(try [UInt8](bytes).withUnsafeBytes { try Checkpoint.decode(lmdbBytes: $0) } == Checkpoint(position: 0x0102, version: 7))
        #expect(throws: LMDBDecodingError.self) { try [UInt8](repeating: 0, count: 13).withUnsafeBytes { try Checkpoint.decode(lmdbBytes: $0) } }
    }
}
