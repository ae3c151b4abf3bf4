import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

/// What several threads append to, in order.
final class Recorder<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []
    func append(_ item: T) { lock.withLock { items.append(item) } }
    var all: [T] { lock.withLock { items } }
}

@Suite("Command pipeline: transactions handed over before the ones ahead are durable")
struct CommandPipelineTests {
    @Test("a pipelined workload writes the same log and the same views, byte for byte, as writes one after another")
    func sameBytesAsPerform() throws {
        let paths = [temporaryDirectory(), temporaryDirectory()]
        defer { for path in paths { try? FileManager.default.removeItem(atPath: path) } }
        let plain = try ActivityStore(path: paths[0], options: testOptions())
        let piped = try ActivityStore(path: paths[1], options: testOptions())
        let workload = IndexerTests.workload()
        for (commands, time) in workload {
            try plain.write(commands.map { ActivityCommand.Timed($0) }, at: time)
        }
        let pipeline = piped.pipeline(depth: 3)
        var tickets: [PipelinedWrite<[CommandResult]>] = []
        for (commands, time) in workload {
            tickets.append(try pipeline.submit(commands.map { ActivityCommand.Timed($0, user: nil) }, at: time))
        }
        try pipeline.waitForAll()
        #expect(try tickets.map { try $0.wait().value ?? [] }.map { $0.map(\.operation) }
            == workload.map { $0.commands.map(\.operation) })

        #expect(try piped.eventStore.events() == plain.eventStore.events())
        RebuildDeterminismTests.expectIdentical(
            try RebuildDeterminismTests.contents(of: plain.views, in: plain.eventStore.environment),
            try RebuildDeterminismTests.contents(of: piped.views, in: piped.eventStore.environment))
        RebuildDeterminismTests.expectIdentical(try RebuildDeterminismTests.indexContents(of: plain),
                                                try RebuildDeterminismTests.indexContents(of: piped))
        #expect(try piped.eventStore.verifyViews(full: true).isEqual)
    }

    @Test("many one-item transactions from several users: results in order, each durable when acknowledged")
    func smallTransactions() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore(path: path, options: testOptions())
        let pipeline = store.pipeline(depth: 8)
        let acknowledged = Recorder<Int>()
        for n in 0..<300 {
            let user = ["alice", "bob", "carol"][n % 3]
            try pipeline.submit([.init(.indexSearchableItems([IndexerTests.item(n)]), user: user)], at: at(Double(n))) { result in
                if case .success(let results) = result, results.first?.positions != nil { acknowledged.append(n) }
            }
        }
        try pipeline.waitForAll()
        #expect(acknowledged.all == Array(0..<300))
        #expect(try store.head() == 300)
        #expect(try store.user("alice").items().count == 100)
        let times = try store.eventStore.events().map(\.appendedAt)
        #expect(times == (0..<300).map { at(Double($0)) })
        #expect(try store.eventStore.verifyViews(full: true).isEqual)
    }

    @Test("a rejected transaction: those before it stay, it and those after it are not applied, and later submits fail")
    func rejectionHalts() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore(path: path, options: testOptions())
        let pipeline = store.pipeline(depth: 4)
        let first = try pipeline.submit([.init(.indexSearchableItems([makeItem("a", title: "first")]))], at: at(1))
        // An index batch ended without its begin: rejected inside the transaction.
        let rejected = try pipeline.submit([.init(.indexSearchableItems([makeItem("b", title: "second")])),
                                            .init(.endIndexBatch(index: "main", clientState: Data([1]), expectedClientState: nil))], at: at(2))
        // Handed over after the rejected one: refused at submit when the writer
        // has already failed, else failed when waited for; never applied.
        let after: PipelinedWrite<[CommandResult]>?
        do {
            after = try pipeline.submit([.init(.indexSearchableItems([makeItem("c", title: "third")]))], at: at(3))
        } catch let error as EventLogError where error.code == .pipelineHalted {
            after = nil
        }
        #expect(try first.wait().positions == 1...1)
        #expect { try rejected.wait() } throws: { error in
            guard let error = error as? ActivityError else { return false }
            return error.commandIndex == 1
        }
        if let after {
            #expect { try after.wait() } throws: { ($0 as? EventLogError)?.code == .pipelineHalted }
        }
        #expect(pipeline.firstFailure is ActivityError)
        #expect { try pipeline.submit([.init(.deleteAllSearchableItems)]) } throws: {
            ($0 as? EventLogError)?.code == .pipelineHalted
        }
        #expect(try store.head() == 1)
        #expect(try store.items().map(\.item.uniqueIdentifier) == ["a"])
        #expect(ids(try store.search("second", now: at(4), after: try store.head())).isEmpty)
        // A new pipeline goes on from what was committed.
        let again = store.pipeline()
        try again.submit([.init(.indexSearchableItems([makeItem("c", title: "third")]))], at: at(5))
        try again.waitForAll()
        #expect(try store.items().map(\.item.uniqueIdentifier) == ["a", "c"])
        #expect(ids(try store.search("third", now: at(6), after: try store.head())) == ["c"])
    }

    @Test("forgetUser among other commands is refused at submit, writing nothing and halting nothing")
    func refusedAtSubmit() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore(path: path, options: testOptions())
        let pipeline = store.pipeline()
        #expect { try pipeline.submit([.init(.forgetUser, user: "alice"), .init(.deleteAllSearchableItems)]) } throws: {
            ($0 as? ActivityError)?.commandIndex == 0
        }
        try pipeline.submit([.init(.indexSearchableItems([makeItem("a", title: "kept")]))], at: at(1))
        try pipeline.waitForAll()
        #expect(try store.head() == 1)
    }
}
