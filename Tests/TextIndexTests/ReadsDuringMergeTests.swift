import Foundation
import LMDB
import Testing
import TextIndex

/// Runs are merged and blocks sealed inside the writer's transaction, not by
/// a background thread: a reader that searches while that transaction is
/// open, merges and seal written but not committed, sees the index exactly
/// as the last commit left it (LMDB gives each read transaction one
/// snapshot), and after the commit sees all of the new state.
@Suite("Reads while the writer merges and seals")
struct ReadsDuringMergeTests {
    /// What a reader saw, and what it should have seen.
    struct Observation: Sendable {
        var transaction: Int
        var committedDocuments: Int
        var documentCount: UInt64
        var commonHits: [String]
        var wordHits: Int
        var expectedWordHits: Int
    }

    static func document(_ n: Int) -> IndexDocument {
        .item("n\(n)", title: "common word\(n % 10) title \(n)", ["contentDescription": ["shared body \(n % 7)"]])
    }

    @Test("a search during an uncommitted merge or seal sees the last commit whole, and nothing of the open transaction")
    func searchesSeeOneCommit() throws {
        let t = try TemporaryIndex()
        let environment = t.environment, index = t.index
        // 37 a transaction (not a divisor of 4,096, so transactions straddle
        // the seals), 240 transactions: 8,880 documents, two blocks sealed,
        // runs merged at two levels.
        let perTransaction = 37, transactions = 240
        let readNow = DispatchSemaphore(value: 0), readDone = DispatchSemaphore(value: 0)
        let observations = Locked<[Observation]>([])
        let committed = Locked<(Int, Int)>((0, 0))
        let failure = Locked<String?>(nil)

        let reader = Thread {
            while true {
                readNow.wait()
                let (transaction, documents) = committed.value
                if transaction < 0 { break }
                do {
                    let observation = try environment.read { txn in
                        let statistics = try index.statistics(in: txn)
                        let common = try index.search("common", now: TemporaryIndex.now, limit: 100_000, in: txn)
                        let word = try index.search("word3", now: TemporaryIndex.now, limit: 100_000, in: txn)
                        return Observation(transaction: transaction, committedDocuments: documents,
                                           documentCount: statistics.documentCount, commonHits: common.map(\.identifier),
                                           wordHits: word.count, expectedWordHits: (0..<documents).filter { $0 % 10 == 3 }.count)
                    }
                    observations.withValue { $0.append(observation) }
                } catch {
                    failure.withValue { $0 = "\(error)" }
                }
                readDone.signal()
            }
        }
        reader.start()

        var runCounts: [Int] = []
        for transaction in 0..<transactions {
            try environment.write { txn in
                let writer = index.writer(in: txn)
                for n in transaction * perTransaction..<(transaction + 1) * perTransaction {
                    try writer.upsert(Self.document(n))
                }
                try writer.flush()
                // The run is written, merged or sealed; the reader searches now, before the commit.
                committed.withValue { $0 = (transaction, transaction * perTransaction) }
                readNow.signal()
                readDone.wait()
            }
            runCounts.append(try RunTests.directory(t)?.runs.count ?? 0)
        }
        committed.withValue { $0 = (-1, 0) }
        readNow.signal()
        reader.cancel()

        #expect(failure.value == nil, "a read failed: \(failure.value ?? "")")
        let seen = observations.value
        #expect(seen.count == transactions)
        for o in seen {
            let expected = (0..<o.committedDocuments).map { "n\($0)" }
            #expect(o.documentCount == UInt64(o.committedDocuments), "transaction \(o.transaction): statistics")
            #expect(o.commonHits.sorted() == expected.sorted(), "transaction \(o.transaction): \(o.commonHits.count) hits for \(o.committedDocuments) committed")
            #expect(o.wordHits == o.expectedWordHits, "transaction \(o.transaction): word3")
        }
        // The reads did overlap merges (a run count that did not grow by one) and seals.
        let merges = zip(runCounts, runCounts.dropFirst()).filter { $1 <= $0 }.count
        #expect(merges > 10, "run counts: \(runCounts)")
        #expect(try RunTests.sealedBlocks(t).count >= 2)
        // After the last commit, everything.
        #expect(try t.search("common", limit: 100_000).count == perTransaction * transactions)
    }
}

/// A value shared between the test's threads under a lock.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func withValue(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
