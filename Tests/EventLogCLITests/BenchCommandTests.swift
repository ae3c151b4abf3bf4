import Foundation
import Testing

/// `eventlog bench` on a small generated corpus: the shape and sanity of
/// its JSON, never its speed (the test machine's speed is not ours).
@Suite("bench: every setting measured, replay verified, a recommendation")
struct BenchCommandTests {
    @Test("--json: one result per setting, positive numbers, replays verified, a recommendation")
    func json() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let queries = try dir.file("queries.txt", ["library", "data server", "net*", "busqueda"])
        let run = try CLI.run(["bench", "--items", "2000", "--batch-sizes", "10,100,500", "--durability", "noSync",
                               "--queries", queries, "--work-dir", dir.path, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try run.object()
        let settings = try #require(report["settings"] as? [[String: Any]])
        #expect(settings.count == 3)
        let batchSizes = settings.compactMap { ($0["setting"] as? [String: Any])?["batchSize"] as? Int }
        #expect(batchSizes == [10, 100, 500])
        for result in settings {
            let setting = try #require(result["setting"] as? [String: Any])
            #expect(setting["durability"] as? String == "noSync")
            #expect(setting["writers"] as? Int == 1)
            #expect(result["items"] as? Int == 2000)
            #expect(result["capped"] as? Bool == false)
            #expect(result["replayVerified"] as? Bool == true, "\(result)")
            for key in ["seconds", "itemsPerSecond", "megabytesPerSecond", "peakResidentBytes", "peakAnonymousBytes", "indexingPeakAnonymousBytes", "bytesOnDisk",
                        "replaySeconds", "replayItemsPerSecond", "replayCPUSeconds", "replayCores", "commits"] {
                #expect(((result[key] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key) in \(result)")
            }
            let latency = try #require(result["commitLatency"] as? [String: Double])
            #expect(latency["p50"]! > 0 && latency["p50"]! <= latency["p99"]! && latency["p99"]! <= latency["max"]!)
            let query = try #require(result["queries"] as? [String: Any])
            #expect(query["count"] as? Int == 4)
            #expect((query["withHits"] as? Int ?? 0) > 0, "generated items contain the queried words")
            #expect(((query["p50Microseconds"] as? NSNumber)?.doubleValue ?? 0) > 0)
        }
        #expect(settings.map { $0["commits"] as? Int } == [200, 20, 4])
        // Pipelined writes (the default, 2 in flight) may share transactions, never split one.
        for result in settings {
            let (commits, transactions) = (result["commits"] as? Int ?? 0, result["transactions"] as? Int ?? 0)
            #expect(transactions > 0 && transactions <= commits, "\(transactions) transactions for \(commits) writes")
        }
        #expect(settings.allSatisfy { $0["rawLMDB"] == nil })
        let recommendation = try #require(report["recommendation"] as? [String: Any])
        #expect(batchSizes.contains(recommendation["batchSize"] as? Int ?? -1))
        #expect(((recommendation["itemsPerSecond"] as? NSNumber)?.doubleValue ?? 0) > 0)
        // The temporary stores are gone.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("eventlog-bench-") }
        #expect(left.isEmpty)
    }

    @Test("bench-queries: one latency a round over an existing store, every query counted; --rounds 0 refused")
    func queriesOverAStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let queries = try dir.file("queries.txt", ["library", "data server", "net*", "busqueda"])
        let store = dir.path + "/store"
        let indexed = try CLI.run(["bench-setting", "--items", "500", "--batch-size", "100", "--durability", "noSync",
                                   "--store", store])
        #expect(indexed.status == 0, "\(indexed.stderr)")
        let run = try CLI.run(["bench-queries", "--store", store, "--queries", queries, "--rounds", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        let rounds = try run.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(rounds.count == 2)
        for round in rounds {
            #expect(round["count"] as? Int == 4)
            #expect((round["withHits"] as? Int ?? 0) > 0, "generated items contain the queried words")
            let p50 = (round["p50Microseconds"] as? NSNumber)?.doubleValue ?? 0
            let p99 = (round["p99Microseconds"] as? NSNumber)?.doubleValue ?? 0
            #expect(p50 > 0 && p50 <= p99, "\(round)")
        }
        let refused = try CLI.run(["bench-queries", "--store", store, "--queries", queries, "--rounds", "0"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--rounds must be 1 or more"), "\(refused.stderr)")
    }

    @Test("--users N: item i in u{i mod N}'s space, one operation an item, each query as its user; replay verified")
    func users() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let queries = try dir.file("queries.txt", ["library", "data server", "net*", "busqueda"])
        let store = dir.path + "/store"
        let indexed = try CLI.run(["bench-setting", "--items", "60", "--batch-size", "25", "--durability", "noSync",
                                   "--users", "7", "--queries", queries, "--store", store])
        #expect(indexed.status == 0, "\(indexed.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(indexed.stdout.utf8)) as? [String: Any])
        #expect((result["setting"] as? [String: Any])?["users"] as? Int == 7)
        #expect(result["items"] as? Int == 60 && result["commits"] as? Int == 3)
        #expect(result["replayVerified"] as? Bool == true, "\(result)")
        #expect((result["queries"] as? [String: Any])?["count"] as? Int == 4)
        // Each user holds the items i with i mod 7 its number (9 for u000 to u003, 8 for the others), one event each.
        let users = try CLI.run(["users", "--store", store, "--json"])
        #expect(users.status == 0, "\(users.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(users.stdout.utf8)) as? [[String: Any]])
        #expect(rows.compactMap { $0["user"] as? String } == (0..<7).map { "u00\($0)" })
        #expect(rows.compactMap { $0["items"] as? Int } == [9, 9, 9, 9, 8, 8, 8])
        #expect(rows.compactMap { $0["documents"] as? Int } == [9, 9, 9, 9, 8, 8, 8])
        let log = try CLI.run(["log", "--store", store, "--json"])
        #expect(log.stdout.split(separator: "\n").count == 60, "one event an item")
        let refused = try CLI.run(["bench", "--users", "0", "--items", "10", "--work-dir", dir.path])
        #expect(refused.status != 0 && refused.stderr.contains("--users 0: allowed: 1 or more"), "\(refused.stderr)")
    }

    @Test("--max-commits caps a setting and says so; --csv has a row per setting")
    func cappedCSV() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let run = try CLI.run(["bench", "--items", "300", "--batch-sizes", "1,100", "--durability", "noSync",
                               "--max-commits", "50", "--work-dir", dir.path, "--csv"])
        #expect(run.status == 0, "\(run.stderr)")
        let rows = run.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.count == 3)
        let header = rows[0].map(String.init)
        let items = try #require(header.firstIndex(of: "items")), capped = try #require(header.firstIndex(of: "capped"))
        #expect(rows[1][items] == "50" && rows[1][capped] == "true")
        #expect(rows[2][items] == "300" && rows[2][capped] == "false")
    }

    @Test("--corpus: JSON Lines read (flat corpus shape); --items takes its first N, which is no cap")
    func corpus() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let lines = (1...30).map { i in
            #"{"uniqueIdentifier":"deb:p\#(i)","domainIdentifier":"libs","title":"p\#(i)","displayName":"a library","#
                + #""contentDescription":"shared library number \#(i)","keywords":["role::shared-lib"],"language":"en"}"#
        }
        let corpus = try dir.file("items.jsonl", lines)
        let run = try CLI.run(["bench", "--corpus", corpus, "--items", "20", "--batch-sizes", "1,5", "--max-commits", "10",
                               "--durability", "noSync", "--work-dir", dir.path, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let settings = try #require(try run.object()["settings"] as? [[String: Any]])
        #expect(settings.map { $0["items"] as? Int } == [10, 20])
        #expect(settings.map { $0["capped"] as? Bool } == [true, false])
        #expect(settings.allSatisfy { $0["replayVerified"] as? Bool == true })
    }

    @Test("a capped run of a .gz corpus ends: gzip, blocked on a full pipe, is stopped")
    func cappedGzipCorpus() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // 4 MB: more than the reader takes at once (1 MiB) and a pipe holds (64 KiB), so gzip is still writing at the cap.
        let lines = (1...30_000).map { i in
            #"{"uniqueIdentifier":"deb:p\#(i)","title":"p\#(i)","contentDescription":"shared library number \#(i) of many, with words enough to fill a pipe"}"#
        }
        let plain = try dir.file("items.jsonl", lines)
        #expect(try CLI.spawnAndWait("/bin/gzip", arguments: [plain], environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil) == 0)
        // Without the fix the command never ended: `timeout` turns that into exit 124.
        let run = try CLI.run(["bench", "--corpus", plain + ".gz", "--items", "30000", "--batch-sizes", "1", "--max-commits", "10",
                               "--durability", "noSync", "--work-dir", dir.path, "--json"],
                              through: ["/usr/bin/timeout", "300"])
        #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
        let settings = try #require(try run.object()["settings"] as? [[String: Any]])
        #expect(settings.map { $0["items"] as? Int } == [10])
        #expect(settings.map { $0["capped"] as? Bool } == [true])
    }

    @Test("a damaged .gz corpus (cut short, bytes flipped, not gzip at all) is an error naming the file and gzip's failure, not a bench of a prefix")
    func damagedGzipCorpus() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let lines = (1...3_000).map { i in
            #"{"uniqueIdentifier":"deb:p\#(i)","title":"p\#(i)","contentDescription":"shared library number \#(i) of many"}"#
        }
        let plain = try dir.file("items.jsonl", lines)
        #expect(try CLI.spawnAndWait("/bin/gzip", arguments: ["-k", plain], environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil) == 0)
        let whole = try Data(contentsOf: URL(fileURLWithPath: plain + ".gz"))
        var flipped = whole
        for i in whole.count / 2 ..< whole.count / 2 + 40 { flipped[i] ^= 0x5A }
        let damaged: [(String, Data, String)] = [
            ("cut.jsonl.gz", whole.prefix(whole.count / 2), "unexpected end of file"),
            ("flipped.jsonl.gz", flipped, "invalid compressed data"),
            ("plain.jsonl.gz", Data(lines[0].utf8), "not in gzip format"),
        ]
        for (name, bytes, reason) in damaged {
            let path = dir.sub(name)
            try bytes.write(to: URL(fileURLWithPath: path))
            let run = try CLI.run(["bench", "--corpus", path, "--batch-sizes", "500", "--durability", "noSync",
                                   "--work-dir", dir.sub("work-\(name)"), "--json"])
            #expect(run.status == 1, "\(name): exit \(run.status): \(run.stdout)")
            #expect(run.stderr.contains("corpus \(path): gzip -dc \(path) exited with status 1"), "\(name): \(run.stderr)")
            #expect(run.stderr.contains(reason), "\(name): \(run.stderr)")
        }
        // The whole file reads whole: every line an item.
        let run = try CLI.run(["bench", "--corpus", plain + ".gz", "--batch-sizes", "500", "--durability", "noSync",
                               "--work-dir", dir.sub("work-whole"), "--json"])
        #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
        let settings = try #require(try run.object()["settings"] as? [[String: Any]])
        #expect(settings.map { $0["items"] as? Int } == [3_000])
    }

    @Test("--alternate-raw: a raw LMDB commit after each of the engine's, its rate and the engine's ratio reported; its environment removed")
    func alternateRaw() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let run = try CLI.run(["bench", "--items", "200", "--batch-sizes", "1", "--pipeline", "0", "--durability", "noSync",
                               "--alternate-raw", "--work-dir", dir.path, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let settings = try #require(try run.object()["settings"] as? [[String: Any]])
        let result = try #require(settings.first)
        #expect((result["setting"] as? [String: Any])?["alternatesRaw"] as? Bool == true)
        #expect(result["commits"] as? Int == 200)
        // One writer waiting for each write: a transaction a write.
        #expect(result["transactions"] as? Int == 200)
        let raw = try #require(result["rawLMDB"] as? [String: Double])
        #expect((raw["commitsPerSecond"] ?? 0) > 0 && (raw["engineRatio"] ?? 0) > 0, "\(raw)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("eventlog-bench-") }
        #expect(left.isEmpty)
        // Raw commits follow one writer's own commits only.
        let refused = try CLI.run(["bench", "--items", "20", "--batch-sizes", "1", "--alternate-raw"])
        #expect(refused.status != 0 && refused.stderr.contains("--writers 1 --pipeline 0"), "\(refused.stderr)")
    }

    @Test("bad options are errors that say what is allowed")
    func badOptions() throws {
        let sizes = try CLI.run(["bench", "--batch-sizes", "10,0"])
        #expect(sizes.status != 0 && sizes.stderr.contains("positive integers"))
        let durability = try CLI.run(["bench", "--durability", "durable,fast"])
        #expect(durability.status != 0 && durability.stderr.contains("noMetaSync"))
        let corpus = try CLI.run(["bench", "--corpus", "/nonexistent/items.jsonl"])
        #expect(corpus.status != 0 && corpus.stderr.contains("/nonexistent/items.jsonl"))
    }
}

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Counts the `<circle>` points of an SVG by class, through a real XML parser.
final class SVGPoints: NSObject, XMLParserDelegate {
    var counts: [String: Int] = [:]
    var settings: Set<String> = []
    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        guard name == "circle", let kind = attributes["class"] else { return }
        counts[kind, default: 0] += 1
        settings.insert("\(attributes["data-batch-size"] ?? "?")/\(attributes["data-durability"] ?? "?")/\(attributes["data-writers"] ?? "?")")
    }
}

@Suite("bench --plot")
struct BenchPlotTests {
    @Test("the SVG parses and holds one point per setting in each series")
    func plot() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let svg = dir.sub("sweep.svg")
        let run = try CLI.run(["bench", "--items", "200", "--batch-sizes", "1,10,100", "--durability", "noSync,noMetaSync",
                               "--max-commits", "20", "--work-dir", dir.path, "--plot", svg, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let parser = try #require(XMLParser(contentsOf: URL(fileURLWithPath: svg)))
        let points = SVGPoints()
        parser.delegate = points
        #expect(parser.parse(), "\(String(describing: parser.parserError))")
        #expect(points.counts == ["itemsPerSecond": 6, "commitp50": 6, "commitp99": 6])
        #expect(points.settings.count == 6)
    }
}
