import Foundation
import Testing

/// The keyword index follows the log in `index/`: what `search`, `query`
/// and `stats` say when it lags, `--after` and `--wait`, and a reader that
/// waits for another process's indexer.
@Suite("The index behind the log, from the command line")
struct IndexCommandTests {
    /// A store whose index lags its log by the last `behind` lines: the
    /// index as it was after the others was put back (what a process killed
    /// before its indexer caught up leaves). Returns the store and its head.
    static func laggingStore(_ dir: TemporaryDirectory) throws -> (store: String, head: Int, behind: Int) {
        let store = dir.sub("store")
        let first = try CLI.run(["apply", "--store", store, try dir.file("first.jsonl", Array(Sample.good.prefix(11)))])
        #expect(first.status == 0, "\(first.stderr)")
        try FileManager.default.copyItem(atPath: store + "/index", toPath: dir.sub("index-then"))
        let rest = try CLI.run(["apply", "--store", store, try dir.file("rest.jsonl", Array(Sample.good.dropFirst(11)))])
        #expect(rest.status == 0, "\(rest.stderr)")
        let applied = try CLI.run(["stats", "--store", store, "--json"]).object()
        try FileManager.default.removeItem(atPath: store + "/index")
        try FileManager.default.moveItem(atPath: dir.sub("index-then"), toPath: store + "/index")
        let head = try #require(applied["head"] as? Int)
        let now = try CLI.run(["stats", "--store", store, "--json"]).object()
        let index = try #require(now["index"] as? [String: Any])
        let behind = try #require(index["behind"] as? Int)
        #expect(behind > 0 && index["applied"] as? Int == head - behind)
        return (store, head, behind)
    }

    @Test("a lagging index: reads answer as it stands with a note saying how far behind, stats shows it, --after fails after --wait saying so")
    func lagIsReported() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (store, head, behind) = try Self.laggingStore(dir)
        let search = try CLI.run(["search", "latte", "--store", store, "--json"])
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.stderr.contains("note: the index is \(behind) events behind the log (applied through \(head - behind), head \(head)"),
                "\(search.stderr)")
        let query = try CLI.run(["query", #"kind == "item""#, "--store", store, "--json"])
        #expect(query.status == 0 && query.stderr.contains("events behind the log"), "\(query.stderr)")
        let text = try CLI.run(["stats", "--store", store]).stdout
        #expect(text.contains("index      the index is \(behind) events behind the log"), "\(text)")
        let stats = try CLI.run(["stats", "--store", store, "--json"]).object()
        let index = try #require(stats["index"] as? [String: Any])
        #expect(index["indexing"] as? Bool == false && (index["secondsBehind"] as? Double ?? -1) >= 0)
        #expect((index["databases"] as? [[String: Any]])?.contains { $0["name"] as? String == "search.docs" } == true)
        let started = Date()
        let waited = try CLI.run(["search", "latte", "--store", store, "--after", "\(head)", "--wait", "0.3"])
        #expect(waited.status != 0 && waited.stdout.isEmpty)
        #expect(waited.stderr.contains("the index has applied the log through position \(head - behind), \(behind) events short of position \(head)"),
                "\(waited.stderr)")
        #expect(Date().timeIntervalSince(started) < 10)
        // A position it has applied: no wait, no note.
        let reached = try CLI.run(["search", "latte", "--store", store, "--after", "\(head - behind)", "--json"])
        #expect(reached.status == 0 && !reached.stderr.contains("note"), "\(reached.stderr)")
        #expect(try CLI.run(["search", "x", "--store", store, "--after", "1", "--wait", "-1"]).status != 0)
    }

    @Test("search --after waits for another process's indexer: a reader started before the index catches up answers once it has")
    func waitsForAnotherProcess() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (store, head, _) = try Self.laggingStore(dir)
        let out = dir.sub("waiting.out"), err = dir.sub("waiting.err")
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let reader = try CLI.spawn(CLI.executable.path, arguments: ["query", #"kind == "item""#, "--store", store, "--after", "\(head)", "--wait", "60", "--json"],
                                   environment: ProcessInfo.processInfo.environment, stdin: "/dev/null", stdout: out, stderr: err)
        usleep(300_000)
        #expect(reader.isRunning, "the reader did not wait")
        // The next open for writing (a write of nothing) catches the index up.
        let open = try CLI.run(["apply", "--store", store, "-"], input: "")
        #expect(open.status == 0, "\(open.stderr)")
        reader.waitUntilExit()
        #expect(reader.terminationStatus == 0, "\((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")")
        let items = try CLI.run(["items", "--store", store, "--json"]).objects().count
        let found = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [Any]
        #expect(found?.count == items)
    }
}
