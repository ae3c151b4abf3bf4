import Foundation
import Testing

/// A flag one thread sets and another reads.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    func stop() { lock.withLock { stopped = true } }
    var isStopped: Bool { lock.withLock { stopped } }
}

extension CompactionTests {
    @Test("a forget while another process takes snapshot after snapshot, then compact: no snapshot and no file of the store keeps a byte of the forgotten user (4 rounds)")
    func forgetBesideSnapshots() throws {
        for round in 0..<4 {
            let dir = TemporaryDirectory()
            defer { dir.remove() }
            let store = dir.sub("store")
            let all = Stores.operations(users: ["alice", "bob"], marked: "alice", rounds: 10, longTexts: true)
            let apply = try CLI.run(["apply", "--transaction-size", "20", "--store", store, try dir.file("all.jsonl", all)])
            #expect(apply.status == 0, "\(apply.stderr)")
            let stop = StopFlag()
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                while !stop.isStopped { _ = try? CLI.run(["snapshot", "create", "--store", store]) }
                done.signal()
            }
            Thread.sleep(forTimeInterval: 0.2 + 0.15 * Double(round))
            let forget = try CLI.run(["forget", "--store", store, "--user", "alice"])
            #expect(forget.status == 0, "round \(round): \(forget.stderr)")
            Thread.sleep(forTimeInterval: 0.3)
            stop.stop()
            done.wait()
            let compact = try CLI.run(["compact", "--store", store])
            #expect(compact.status == 0, "round \(round): \(compact.stderr)")
            let left = try Self.files(under: store, containing: Self.markerBytes)
            #expect(left.isEmpty, "round \(round): the forgotten user's bytes are left in \(left)")
            #expect(try CLI.run(["verify", "--store", store]).status == 0)
        }
    }
}
