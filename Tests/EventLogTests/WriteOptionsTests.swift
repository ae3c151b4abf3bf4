import EventLog
import Foundation
import Testing

@Suite("Optimistic concurrency and idempotency")
struct WriteOptionsTests {
    @Test("an append stating the wrong head fails, appends nothing, and names both heads")
    func expectedHead() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        try store.append([event("t", 1), event("t", 2)], WriteOptions(expectedHead: 0))
        #expect {
            try store.append([event("t", 3)], WriteOptions(expectedHead: 1))
        } throws: { error in
            guard let error = error as? EventLogError else { return false }
            return error.code == .headMismatch && error.message.contains("at 1") && error.message.contains("to 2")
        }
        #expect(try store.head() == 2)
        let receipt = try store.append([event("t", 3)], WriteOptions(expectedHead: 2))
        #expect(receipt.positions == 3...3)
    }

    @Test("a retry with the same idempotency key returns the first positions and appends nothing")
    func idempotency() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        try store.append([event("t", 0)])
        let first = try store.append([event("t", 1), event("t", 2)], WriteOptions(idempotencyKey: "req-1"))
        #expect(first.positions == 2...3)
        #expect(!first.isRetry)
        try store.append([event("t", 3)])
        let retry = try store.append([event("t", 1), event("t", 2)], WriteOptions(idempotencyKey: "req-1"))
        #expect(retry.isRetry)
        #expect(retry.positions == 2...3)
        #expect(try store.head() == 4)
        #expect(try store.read { try store.views.counts.total(in: $0) } == 4)
        #expect {
            try store.append([event("t", 9)], WriteOptions(idempotencyKey: String(repeating: "k", count: 257)))
        } throws: { ($0 as? EventLogError)?.code == .invalidArgument }
        #expect(try store.head() == 4)
        // Exactly 256 UTF-8 bytes (multi-byte characters) is allowed, and retried as any key.
        let longest = String(repeating: "日", count: 85) + "k"
        #expect(longest.utf8.count == 256)
        #expect(try store.append([event("t", 5)], WriteOptions(idempotencyKey: longest)).positions == 5...5)
        #expect(try store.append([event("t", 5)], WriteOptions(idempotencyKey: longest)).isRetry)
    }

    @Test("idempotency keys survive a reopen")
    func idempotencyAcrossReopen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            try store.append([event("t", 1)], WriteOptions(idempotencyKey: "once"))
        }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        let retry = try store.append([event("t", 1)], WriteOptions(idempotencyKey: "once"))
        #expect(retry.isRetry && retry.positions == 1...1)
        #expect(try store.head() == 1)
    }

    @Test("concurrent writers share transactions; one that throws loses only its own events")
    func groupCommitIsolation() async throws {
        struct Refused: Error {}
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<TwoViews>(path: dir.path, options: fastOptions())
        let writers = 8, batches = 50
        try await withThrowingTaskGroup(of: Int.self) { group in
            for w in 0..<writers {
                group.addTask {
                    var refused = 0
                    for b in 0..<batches {
                        do {
                            try store.write { batch in
                                try batch.append(event("w\(w)", b))
                                try batch.append(event("w\(w)", b))
                                if (w + b) % 7 == 0 { throw Refused() }
                            }
                        } catch is Refused { refused += 1 }
                    }
                    return refused
                }
            }
            var refused = 0
            for try await r in group { refused += r }
            let committed = UInt64(writers * batches - refused) * 2
            #expect(try store.head() == committed)
            try await store.read { txn throws in
                #expect(try store.views.counts.total(in: txn) == committed)
                #expect(try store.views.bytes.total(in: txn) == committed * 64)
            }
        }
        // Batches are whole: each writer's events come in pairs.
        var previous: RecordedEvent?
        try store.forEachEvent { recorded in
            if recorded.position % 2 == 0 { #expect(recorded.type == previous?.type) }
            previous = recorded
            return true
        }
        #expect(try store.verify().isValid)
    }
}
