import EventLog
import Foundation
import LMDB
import Testing

/// Writers and readers in other processes, through the `SyntheticAppender`
/// executable built beside the tests.
@Suite("Other processes", .serialized)
struct ProcessTests {
    @Test("a writer killed with SIGKILL at many points leaves whole batches and a valid chain")
    func killedWriter() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var generator = SystemRandomNumberGenerator()
        var lastCommitted: Position = 0
        for round in 0..<10 {
            let child = try ChildProcess("SyntheticAppender", [
                "append", "--store", dir.path, "--writer", "\(round % 3 + 1)", "--batches", "100000", "--batch-size", "7",
                "--durability", round % 2 == 0 ? "durable" : "noSync",
            ])
            // Once it has committed (however slow the machine), kill it at a random point after.
            var output = ""
            let handle = child.output.fileHandleForReading
            while !output.contains("committed"), let chunk = try handle.read(upToCount: 64), !chunk.isEmpty {
                output += String(decoding: chunk, as: UTF8.self)
            }
            usleep(UInt32.random(in: 0...200_000, using: &generator))
            child.kill()
            output += child.finish().output
            // What the child saw committed before it died must be there.
            if let line = output.split(separator: "\n").last(where: { $0.hasPrefix("committed") }),
               let position = Position(line.split(separator: " ")[2]) {
                lastCommitted = max(lastCommitted, position)
            }
            let reader = try ChildProcess("SyntheticAppender", ["read", "--store", dir.path, "--batch-size", "7", "--seconds", "0"])
            let (status, verdict) = reader.finish()
            #expect(status == 0, "round \(round): \(verdict)")
            let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
            let head = try store.head()
            #expect(head % 7 == 0, "round \(round): head \(head) is not a whole number of batches")
            #expect(head >= lastCommitted, "round \(round): committed \(lastCommitted) but head is \(head)")
            let report = try store.verify()
            #expect(report.isValid, "round \(round): \(String(describing: report.firstProblem))")
        }
        #expect(lastCommitted > 0)
    }

    @Test("two processes appending at once: no position duplicated or lost, chain valid")
    func twoWriters() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let writers = (1...2).map { w in
            try! ChildProcess("SyntheticAppender", [
                "append", "--store", dir.path, "--writer", "\(w)", "--batches", "300", "--batch-size", "5", "--durability", "noSync",
            ])
        }
        for writer in writers { #expect(writer.finish().status == 0) }
        let reader = try ChildProcess("SyntheticAppender", ["read", "--store", dir.path, "--batch-size", "5", "--seconds", "0"])
        let (status, verdict) = reader.finish()
        #expect(status == 0, "\(verdict)")
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        #expect(try store.head() == 3000)
        #expect(try store.read { try store.views.counts.total(in: $0) } == 3000)
        #expect(try store.verify().isValid)
    }

    @Test("readers in threads and in another process see a consistent prefix while a writer appends")
    func readersDuringWrites() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        let reader = try ChildProcess("SyntheticAppender", ["read", "--store", dir.path, "--batch-size", "4", "--seconds", "3"])
        let writer = try ChildProcess("SyntheticAppender", [
            "append", "--store", dir.path, "--writer", "1", "--batches", "2000", "--batch-size", "4", "--durability", "noSync",
        ])
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var reads = 0, previous: Position = 0
                    let deadline = Date().addingTimeInterval(2)
                    while Date() < deadline {
                        try store.read { txn in
                            let head = try store.head(in: txn)
                            #expect(head % 4 == 0, "head \(head) cuts a batch")
                            #expect(head >= previous, "the head went back from \(previous) to \(head)")
                            previous = head
                            if head > 0 {
                                #expect(try store.event(at: head, in: txn) != nil)
                                #expect(try store.event(at: head + 1, in: txn) == nil)
                            }
                        }
                        #expect(try store.verify().isValid)
                        reads += 1
                    }
                    return reads
                }
            }
            for try await reads in group { #expect(reads > 0) }
        }
        #expect(writer.finish().status == 0)
        let (status, verdict) = reader.finish()
        #expect(status == 0, "\(verdict)")
        #expect(try store.head() == 8000)
    }
}

@Suite("Limits across processes", .serialized)
struct ProcessLimitTests {
    @Test("another process holds all 1,024 reader slots: a read is a clear error; once it is killed, its slots are reclaimed")
    func staleReaderSlots() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        try store.append([event("test.happened", 1)])
        let holder = try ChildProcess("SyntheticAppender", ["hold-readers", "--store", dir.path, "--count", "1024", "--seconds", "300"])
        #expect(try holder.waitFor("holding").contains("holding 1024"))
        #expect(try store.environment.clearStaleReaders() == 0, "the holder's slots are alive")
        #expect {
            try store.read { _ in }
        } throws: { error in
            guard let error = error as? LMDBError else { return false }
            return error == .readersFull && "\(error)".contains("reader slots are taken")
        }
        holder.kill()
        holder.process.waitUntilExit()
        // The dead process's 1,024 slots are cleared (mdb_reader_check) by the next read.
        #expect(try store.read { try store.views.counts.total(in: $0) } == 1)
    }

    @Test("a write inside a write on the same thread traps with a message instead of deadlocking", arguments: ["store", "environment"])
    func nestedWriteTraps(layer: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let child = try ChildProcess("SyntheticAppender", ["nested-write", "--store", dir.path, "--layer", layer], capturingErrors: true)
        let (reason, status, errors) = child.finishWithErrors()
        #expect(reason == .uncaughtSignal && status == SIGILL, "\(reason) \(status): \(errors)")
        #expect(errors.contains("Fatal error"))
        #expect(errors.contains(layer == "store" ? "EventStore.write was called inside a write closure on the same thread"
                                                 : "was called inside a write transaction on the same thread"), "\(errors)")
        // Nothing of the outer write was committed.
        let store = try EventStore<CountingViews>(path: dir.path, options: fastOptions())
        #expect(try store.head() == 0)
    }
}
