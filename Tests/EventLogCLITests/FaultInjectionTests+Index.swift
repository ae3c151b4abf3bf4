import Foundation
import Testing

extension FaultInjectionTests {
    /// The index environment's writes and syncs (`index/`), failed one at a
    /// time while `apply` runs (its indexer applies each commit behind the
    /// log): the commits of the log are never touched, the indexer tries
    /// again and says why on stderr, the command fails only when the fault
    /// persists, and the next open of the store brings the index up to the
    /// log, equal to a rebuild.
    @Test("a failed write or sync of the index environment: the indexer tries again, nothing acknowledged is lost, the index catches up")
    func indexSweep() throws {
        let shim = try FaultShim.library()
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let base = dir.sub("base/store")
        try FaultWorkload.applyPrefix(base, dir)
        let rest = try dir.file("rest.jsonl", Array(Sample.good.dropFirst(5)))
        let command = { (store: String) in ["apply", "--transaction-size", "1", "--pipeline", "0", "--store", store, rest] }
        let clean = dir.sub("clean/store")
        try copyStore(base, to: clean)
        let cleanRun = try FaultShim.run(command(clean), shim: shim, watching: clean + "/index", fault: nil)
        #expect(cleanRun.status == 0, "without a fault: \(cleanRun.stderr)")
        let calls = cleanRun.calls
        #expect(calls > 0, "the shim saw no write or sync on the index: \(cleanRun)")
        let cleanLog = try logLines(clean)
        // The indexer's transactions follow the commits as timing has it: N samples the calls of the clean run.
        let count = min(calls, 24)
        let picks = Array(Set((0..<count).map { count == 1 ? 1 : 1 + $0 * (calls - 1) / (count - 1) })).sorted()
        var injected = 0
        for (index, nth) in picks.enumerated() {
            let kind = FaultKind.allCases[index % FaultKind.allCases.count]
            var label = "index, call \(nth) of \(calls), \(kind)"
            let run = dir.sub("index-run-\(index)")
            let store = (run as NSString).appendingPathComponent("store")
            try copyStore(base, to: store)
            var result = try FaultShim.run(command(store), shim: shim, watching: store + "/index", fault: (nth, kind))
            if result.failedCalls == 0, result.calls > 0, result.calls < nth {
                // This run's indexer grouped more commits a transaction than the clean run's (a loaded
                // machine): it made fewer calls. Once more, at the same fraction of this run's calls.
                let again = max(1, nth * result.calls / calls)
                label = "index, call \(again) of \(result.calls) (call \(nth) of \(calls) not reached), \(kind)"
                try FileManager.default.removeItem(atPath: store)
                try copyStore(base, to: store)
                result = try FaultShim.run(command(store), shim: shim, watching: store + "/index", fault: (again, kind))
            }
            #expect(!result.timedOut, "\(label): the command hung")
            #expect(result.signal == nil, "\(label): the command crashed with signal \(result.signal ?? 0): \(result.stderr)")
            if result.failedCalls > 0 {
                injected += 1
                #expect(result.stderr.contains(kind.message), "\(label) (\(result.firstFailure)): the failure is not named: \(result.stderr)")
                if kind.persists { #expect(result.status != 0, "\(label): the command succeeded with an index that cannot be written") }
            }
            // Every commit of the log is there, whatever the index met.
            #expect(try logLines(store) == cleanLog, "\(label): the log differs from the clean run's")
            #expect(try CLI.run(["verify", "--store", store]).status == 0, "\(label): verify")
            // The next open (a write) brings the index up to the log.
            let next = try dir.file("index-next-\(index).jsonl", [FaultWorkload.nextWrite])
            let write = try CLI.run(["apply", "--store", store, next])
            #expect(write.status == 0, "\(label): a write after the fault: \(write.stderr)")
            let replay = try CLI.run(["replay", "--verify", "--store", store])
            #expect(replay.status == 0, "\(label): replay --verify: \(replay.stdout) \(replay.stderr)")
            let stats = try CLI.run(["stats", "--store", store, "--json"]).object()
            #expect((stats["index"] as? [String: Any])?["behind"] as? Int == 0, "\(label): the index lags after a write: \(stats)")
            try? FileManager.default.removeItem(atPath: run)
        }
        #expect(injected > count / 2, "\(count - injected) of \(count) faults of the index were never reached")
        FaultShim.record("index (apply)", calls: calls, faults: injected)
    }
}
