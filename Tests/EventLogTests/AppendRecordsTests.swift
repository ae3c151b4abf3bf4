import EventLog
import Foundation
import LMDB
import Testing

/// `appendRecords`: another store's exact records, through the one write path.
@Suite("Appending exact records")
struct AppendRecordsTests {
    private func events(_ count: Int, type: String = "t.a") -> [NewEvent] {
        (0..<count).map { NewEvent(type: $0 % 3 == 0 ? "t.b" : type, schemaVersion: 1, payload: Array("event \($0)".utf8)) }
    }

    @Test("a copy made of the leader's records has its bytes, its last link and its views, and verifies")
    func copy() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let leader = try EventStore<TwoViews>(path: dir.sub("leader"), options: fastOptions())
        try leader.append(events(250))
        let follower = try EventStore<TwoViews>(path: dir.sub("follower"), options: fastOptions())
        var position: Position = 0
        while case let batch = try leader.records(after: position, limit: 64), !batch.isEmpty {
            position = try follower.appendRecords(batch)
        }
        #expect(position == 250)
        #expect(try follower.headAndLink() == leader.headAndLink())
        for p: Position in [1, 77, 250] { #expect(try follower.record(at: p) == leader.record(at: p)) }
        let (a, b) = (try leader.read { txn in (try leader.views.counts.total(in: txn), try leader.views.bytes.total(in: txn)) },
                      try follower.read { txn in (try follower.views.counts.total(in: txn), try follower.views.bytes.total(in: txn)) })
        #expect(a == b)
        #expect(try follower.verify().isValid)
        #expect(try follower.checkpoint(of: "test.typeCounts")?.position == 250)
    }

    @Test("a record that does not continue the log is refused, naming its position, and nothing of the batch is written")
    func refusals() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let leader = try EventStore<TwoViews>(path: dir.sub("leader"), options: fastOptions())
        try leader.append(events(10))
        let other = try EventStore<TwoViews>(path: dir.sub("other"), options: fastOptions())
        try other.append(events(10, type: "t.other"))
        let follower = try EventStore<TwoViews>(path: dir.sub("follower"), options: fastOptions())
        try follower.appendRecords(try leader.records(after: 0, limit: 5))

        // A gap: position 7 after head 5.
        let gap = #expect(throws: EventLogError.self) { try follower.appendRecords(try leader.records(after: 6, limit: 2)) }
        #expect(gap?.code == .diverged && gap?.position == 7)
        // Another history: the other store's record 6 does not follow the leader's 5.
        let fork = #expect(throws: EventLogError.self) {
            try follower.appendRecords(try leader.records(after: 5, limit: 1) + other.records(after: 6, limit: 1))
        }
        #expect(fork?.code == .diverged && fork?.position == 7)
        // A flipped payload byte: the digest no longer holds.
        var bytes = try #require(try leader.record(at: 6)).bytes
        bytes[bytes.count - 6] ^= 1
        let damaged = try LogRecord(position: 6, bytes: bytes)
        let corrupt = #expect(throws: EventLogError.self) { try follower.appendRecords([damaged]) }
        #expect(corrupt?.code == .corrupt && corrupt?.position == 6)
        // Nothing of the refused batches was written.
        #expect(try follower.head() == 5)
        #expect(try follower.read { try follower.views.counts.total(in: $0) } == 5)
        // Not a record at all.
        let garbage = #expect(throws: EventLogError.self) { try LogRecord(position: 6, bytes: [1, 2, 3]) }
        #expect(garbage?.code == .corrupt)
    }
}
