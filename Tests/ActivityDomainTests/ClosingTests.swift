import EventLog
import Foundation
import LMDB
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing
@testable import ActivityDomain

/// `close()`: what a service does on shutdown, and what it must be able to do after.
@Suite("Closing a store")
struct ClosingTests {
    @Test("after close every call throws storeClosed; the directory opens again and compacts in the same process")
    func everyCallFailsThenReopens() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        try await store.declareActivityTypes([viewOrder])
        let alice = store.user("alice")
        try await alice.write { try $0.createActivity(makeActivity("a1") { $0.eligibleForSearch = true; $0.title = "Latte" }) }
        try await alice.write { try $0.becomeCurrent("a1") }
        try await alice.write { try $0.indexSearchableItems([makeItem("i1", title: "Oat latte")]) }
        let head = try store.head()
        // Opening the same directory twice in a process is refused while it is open.
        #expect(throws: EnvironmentAlreadyOpenError.self) { _ = try ActivityStore(path: path, options: testOptions()) }

        store.close()
        #expect(store.isClosed)
        store.close()   // twice: nothing more

        func expectClosed(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("\(what) succeeded on a closed store")
            } catch EventLogError.storeClosed {
                // expected
            } catch {
                Issue.record("\(what) threw \(error), not storeClosed")
            }
        }
        expectClosed("head") { _ = try store.head() }
        expectClosed("a command") { try alice.becomeCurrent("a1") }
        expectClosed("a read") { _ = try alice.currentActivities() }
        expectClosed("a search") { _ = try alice.search("latte", now: at(60)) }
        expectClosed("reading") { _ = try alice.read { try $0.items() } }
        expectClosed("events") { _ = try store.eventStore.events(from: 1) }
        expectClosed("verify") { _ = try store.eventStore.verify() }
        expectClosed("a snapshot") { _ = try store.eventStore.createSnapshot() }
        #expect(store.eventStore.environment.info().mapSize > 0, "info() answers from what it saw at close, without touching the handle")
        await #expect { try await alice.write { try $0.createActivity(makeActivity("a2")) } } throws: { EventLogError.storeClosed ~= $0 }
        let error = #expect(throws: EventLogError.self) { try store.declareActivityTypes([editOrder]) }
        #expect(error?.description.contains(path) == true && error?.description.contains("closed") == true, "\(String(describing: error))")
        var feed = alice.changes(from: 1).makeAsyncIterator()
        await #expect { _ = try await feed.next() } throws: { EventLogError.storeClosed ~= $0 }

        // Compacted, then opened again, all in this process: the data is there.
        let report = try ActivityStore.compact(path: path, options: testOptions())
        #expect(report.bytesAfter > 0)
        let reopened = try ActivityStore.open(path: path, options: testOptions())
        #expect(try reopened.head() == head)
        await #expect(try reopened.user("alice").read { try $0.currentActivities() }.map(\.activity.activity) == ["a1"])
        #expect(try reopened.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload).isValid)
        #expect(try reopened.eventStore.verifyViews(full: true).isEqual)
        reopened.close()
    }

    @Test("writes in flight when close is called finish and stay; every other write throws storeClosed, none hangs")
    func writesInFlightFinish() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = testOptions()
        options.store.durability = .durable
        let store = try ActivityStore.open(path: path, options: options)
        try await store.declareActivityTypes([viewOrder])
        let writers = 16, cap = 5_000
        let acknowledgedSoFar = LockedCounter()
        // Each writer writes until the store refuses, recording the
        // activities whose creation was acknowledged.
        let (acknowledged, refused) = try await withThrowingTaskGroup(of: ([String], Bool).self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var done: [String] = []
                    for i in 0..<cap {
                        let id = "w\(writer)-\(i)"
                        do {
                            try await store.user("u\(writer % 4)").write { try $0.createActivity(makeActivity(id)) }
                            done.append("u\(writer % 4)/\(id)")
                            acknowledgedSoFar.increment()
                        } catch EventLogError.storeClosed {
                            return (done, true)
                        }
                    }
                    return (done, false)
                }
            }
            // Close while the writers are at it.
            while acknowledgedSoFar.value < 200 { try await Task.sleep(for: .milliseconds(1)) }
            try await BlockingWork.run { store.close() }
            var all: [String] = []
            var refused = 0
            for try await (done, wasRefused) in group {
                all += done
                if wasRefused { refused += 1 }
            }
            return (all, refused)
        }
        #expect(refused == writers, "every writer met the closed store and stopped")
        #expect(acknowledged.count >= 200)
        let reopened = try ActivityStore.open(path: path, options: options)
        defer { reopened.close() }
        var stored: [String] = []
        for user in 0..<4 { stored += try reopened.user("u\(user)").activities().map { "u\(user)/\($0.activity.activity)" } }
        #expect(Set(stored) == Set(acknowledged), "every acknowledged write is stored, and nothing else")
        #expect(stored.count == acknowledged.count)
        #expect(try reopened.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload).isValid)
    }

    @Test("a pipeline's writes submitted before close commit; close waits for them")
    func pipelineWritesFinish() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        let pipeline = store.pipeline(depth: 8)
        var tickets: [PipelinedWrite<[CommandResult]>] = []
        for i in 0..<50 {
            tickets.append(try pipeline.submit([.init(.indexSearchableItems([makeItem("i\(i)", title: "item \(i)")]), user: "alice")]))
        }
        store.close()
        for ticket in tickets { _ = try ticket.wait() }
        #expect { _ = try pipeline.submit([.init(.deleteAllSearchableItems)]) } throws: { EventLogError.storeClosed ~= $0 }
        let reopened = try ActivityStore.open(path: path, options: testOptions())
        #expect(try reopened.user("alice").items().count == 50)
        reopened.close()
    }

    @Test("a store in a ServiceGroup closes on graceful shutdown")
    func serviceClosesOnShutdown() async throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        try await store.declareActivityTypes([viewOrder])
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await store.run() }
                try await store.user("alice").write { try $0.createActivity(makeActivity("a1")) }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        #expect(store.isClosed)
        let reopened = try ActivityStore.open(path: path, options: testOptions())
        await #expect(try reopened.user("alice").read { try $0.activity("a1") } != nil)
        reopened.close()
    }
}

/// A counter shared by tasks.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
