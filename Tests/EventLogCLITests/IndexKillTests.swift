import Foundation
import Testing

/// The keyword index merges runs and seals blocks in the indexer's
/// transactions, behind the log: a process killed (SIGKILL) while its
/// indexer does loses nothing that was committed, leaves an index that a
/// rebuild reproduces byte for byte at the position it applied through,
/// and the next open of the store brings the index up to the log.
@Suite("The index killed while it merges and seals")
struct IndexKillTests {
    /// One `indexSearchableItems` line of the items `range`, words shared so
    /// that every run holds common terms.
    static func line(_ range: Range<Int>) -> String {
        let items = range.map { n in
            #"{"uniqueIdentifier":"i\#(n)","domainIdentifier":"d\#(n % 7)","attributeSet":{"title":"common word\#(n % 50) item\#(n)","contentDescription":"shared text number \#(n % 13) and \#(n % 101)"}}"#
        }
        return #"{"op":"indexSearchableItems","items":["# + items.joined(separator: ",") + "]}"
    }

    /// A rebuild equals the live views and the index where it stands; the
    /// next open for writing brings the index up to the log; then every
    /// item the store holds is in the index, and a rebuild equals it again.
    static func expectConsistent(_ store: String, round: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let verify = try CLI.run(["verify", "--store", store])
        #expect(verify.status == 0, "round \(round): \(verify.stderr)", sourceLocation: sourceLocation)
        let lagging = try CLI.run(["replay", "--verify", "--store", store, "--json"])
        #expect(lagging.status == 0, "round \(round): \(lagging.stderr)", sourceLocation: sourceLocation)
        #expect(try lagging.object()["equal"] as? Bool == true, "round \(round)", sourceLocation: sourceLocation)
        // The next open for writing (a write of nothing) catches the index up.
        let open = try CLI.run(["apply", "--store", store, "-"], input: "")
        #expect(open.status == 0, "round \(round): \(open.stderr)", sourceLocation: sourceLocation)
        let stats = try CLI.run(["stats", "--store", store, "--json"]).object()
        #expect((stats["index"] as? [String: Any])?["behind"] as? Int == 0, "round \(round): \(stats)", sourceLocation: sourceLocation)
        let replay = try CLI.run(["replay", "--verify", "--store", store, "--json"])
        #expect(replay.status == 0, "round \(round): \(replay.stderr)", sourceLocation: sourceLocation)
        #expect(try replay.object()["equal"] as? Bool == true, "round \(round)", sourceLocation: sourceLocation)
        let items = try CLI.run(["items", "--store", store, "--json"]).objects().compactMap { $0["uniqueIdentifier"] as? String }
        let indexed = try CLI.run(["query", #"kind == "item""#, "--store", store, "--json"]).objects().compactMap { $0["identifier"] as? String }
        #expect(items.sorted() == indexed.sorted(), "round \(round): \(items.count) items, \(indexed.count) indexed",
                sourceLocation: sourceLocation)
        return items.count
    }

    @Test("a writer killed during merges and seals loses nothing committed; a rebuild equals the views")
    func killedDuringMergesAndSeals() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        // 72 single items (runs merged 8 into 1, and 64 into 1), then 30
        // lines of 150 (the block's last id is allocated: its runs sealed).
        var lines = (0..<72).map { IndexKillTests.line($0..<($0 + 1)) }
        lines += (0..<30).map { IndexKillTests.line((72 + $0 * 150)..<(72 + ($0 + 1) * 150)) }
        let file = try dir.file("items.jsonl", lines)
        let total = 72 + 30 * 150

        var killedRounds = 0
        // Killed after ever longer delays; each round starts the file again
        // (its items replace the stored ones, then new ones come).
        for (round, delay) in [0.15, 0.4, 0.8, 1.6, 3.2].enumerated() {
            let process = try CLI.spawn(CLI.executable.path, arguments: ["apply", "--store", store, "--transaction-size", "1", file],
                                        environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: "/dev/null", stderr: "/dev/null")
            usleep(UInt32(delay * 1_000_000))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                killedRounds += 1
            }
            process.waitUntilExit()
            guard FileManager.default.fileExists(atPath: store + "/data.mdb") else { continue }
            // Killed before its first commit: an environment without an event
            // log yet, which read commands refuse as no store (as they do a
            // missing data.mdb); the next round's apply creates the log.
            let probe = try CLI.run(["verify", "--store", store])
            if probe.status != 0 && probe.stderr.contains("without an event log") { continue }
            _ = try IndexKillTests.expectConsistent(store, round: round)
        }
        // Then to the end: everything there, once.
        let finish = try CLI.run(["apply", "--store", store, "--transaction-size", "1", file])
        #expect(finish.status == 0, "\(finish.stderr)")
        #expect(try IndexKillTests.expectConsistent(store, round: 99) == total)
        let hits = try CLI.run(["search", "common word7", "--store", store, "--limit", "1000", "--json"]).objects()
        #expect(hits.count == (0..<total).filter { $0 % 50 == 7 }.count)
        print("index kill test: \(killedRounds) of 5 writers killed mid-way")
        // The kills were not all after the end (on a fast machine the first ones still land mid-way).
        #expect(killedRounds >= 1)
    }

    @Test("a process killed while its indexer rebuilds the index behind the whole log: the index is whole where it stopped, and the next open goes on from there")
    func killedWhileCatchingUp() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        let lines = (0..<80).map { IndexKillTests.line(($0 * 150)..<(($0 + 1) * 150)) }
        let apply = try CLI.run(["apply", "--store", store, try dir.file("items.jsonl", lines)])
        #expect(apply.status == 0, "\(apply.stderr)")
        let head = try #require(try CLI.run(["stats", "--store", store, "--json"]).object()["head"] as? Int)
        // The index goes: the next open rebuilds it from position 1, behind the log.
        try FileManager.default.removeItem(atPath: store + "/index")
        var applied: [Int] = []
        for (round, delay) in [0.25, 0.35, 0.45, 0.6, 0.8, 1.1, 1.6].enumerated() {
            let process = try CLI.spawn(CLI.executable.path, arguments: ["apply", "--store", store, "-"],
                                        environment: ProcessInfo.processInfo.environment, stdin: "/dev/null", stdout: "/dev/null", stderr: "/dev/null")
            usleep(UInt32(delay * 1_000_000))
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            guard FileManager.default.fileExists(atPath: store + "/index/data.mdb") else { continue }
            let stats = try CLI.run(["stats", "--store", store, "--json"]).object()
            let index = try #require(stats["index"] as? [String: Any])
            let now = try #require(index["applied"] as? Int)
            #expect(now <= head && index["behind"] as? Int == head - now, "round \(round): \(index)")
            applied.append(now)
            // Equal to a rebuild where it stands.
            let verify = try CLI.run(["replay", "--verify", "--store", store, "--json"])
            #expect(verify.status == 0 && (try? verify.object()["equal"] as? Bool) == true, "round \(round): \(verify.stdout) \(verify.stderr)")
        }
        // Never back: each open went on from where the last one stopped.
        #expect(applied == applied.sorted(), "\(applied)")
        let open = try CLI.run(["apply", "--store", store, "-"], input: "")
        #expect(open.status == 0, "\(open.stderr)")
        #expect(try IndexKillTests.expectConsistent(store, round: 99) == 80 * 150)
        // Some kill landed before the index was done (the first ones do, on any machine this runs on).
        #expect(applied.contains { $0 < head }, "\(applied)")
        print("index catch-up kill test: applied \(applied) of \(head)")
    }
}
