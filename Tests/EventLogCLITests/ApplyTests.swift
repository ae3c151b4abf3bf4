import Foundation
import Testing

@Suite("apply: bad lines reported, the store is what the good lines make")
struct ApplyTests {
    /// The good lines with bad ones between them; each bad line's number and
    /// the field its error must name (nil where the line is not even JSON
    /// or falls with its batch).
    static func mixed() -> (lines: [String], bad: [Int: String?]) {
        var lines: [String] = []
        var bad: [Int: String?] = [:]
        func good(_ index: Int) { lines.append(Sample.good[index]) }
        func reject(_ line: String, field: String?) {
            lines.append(line)
            bad[lines.count] = field
        }
        good(0)
        reject(#"{"op":"becomeCurrent","activity":"a1","#, field: nil)                         // malformed JSON
        good(1)
        reject(#"{"op":"createActivity","activity":"a1","activityType":"com.example.app.viewOrder","device":"phone"}"#, field: "activity")
        reject(#"{"op":"becomeCurrent","activity":"nobody"}"#, field: "activity")
        good(2)
        reject(#"{"op":"launchRocket"}"#, field: "op")
        reject(#"{"op":"createActivity","activity":"w","activityType":"com.example.app.viewOrder","device":"phone","webpageURL":"ftp://example.com/x"}"#, field: "webpageURL")
        good(3)
        reject(#"{"op":"updateActivity","activity":"a1","eligibleForSerach":true}"#, field: "eligibleForSerach")
        good(4)
        reject(#"{"op":"createActivity","activity":"u","activityType":"notReverseDNS","device":"phone"}"#, field: "activityType")
        good(5); good(6); good(7); good(8); good(9); good(10)
        // A batch with one bad item: all four lines fall.
        reject(#"{"op":"beginIndexBatch","index":"orders-indexer","at":"2026-11-22T10:00:10Z"}"#, field: nil)
        reject(#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"batch-good","attributeSet":{"title":"fine"}}]}"#, field: nil)
        reject(#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"batch-bad","attributeSet":{"titel":"typo"}}]}"#, field: "attributeSet")
        reject(#"{"op":"endIndexBatch","index":"orders-indexer","clientState":"MQ=="}"#, field: nil)
        good(11); good(12); good(13)
        // A batch whose expected client state is not the stored one ("NDI="): all three fall.
        reject(#"{"op":"beginIndexBatch","index":"orders-indexer"}"#, field: nil)
        reject(#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"late","attributeSet":{"title":"late"}}]}"#, field: nil)
        reject(#"{"op":"endIndexBatch","index":"orders-indexer","clientState":"Mg==","expectedClientState":"MQ=="}"#, field: "expectedClientState")
        good(14)
        reject(#"{"op":"deleteSearchableItemsInDomains","domains":["orders..2026"]}"#, field: "domains")
        return (lines, bad)
    }

    /// Every view and the log, as JSON, for comparing two stores.
    static func views(_ store: String) throws -> [String: Any] {
        var result: [String: Any] = [:]
        for command in [["saved"], ["current"], ["items"], ["client-state"], ["handoff", "--device", "tablet", "--now", Sample.now]] {
            let run = try CLI.run(command + ["--store", store, "--json"])
            #expect(run.status == 0, "\(command): \(run.stderr)")
            result[command[0]] = try run.json()
        }
        let log = try CLI.run(["log", "--store", store, "--json"])
        result["log"] = try log.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) }
        return result
    }

    @Test("each bad line is reported with its number; the store equals one that got only the good lines",
          arguments: [1, 2, 3, 500], [0, 2, 8])
    func badLines(transactionSize: Int, pipeline: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (lines, bad) = Self.mixed()
        // With a pipeline, a rejected transaction halts those in flight behind it; they are applied again.
        let run = try CLI.run(["apply", "--store", dir.sub("mixed"), "--json", "--transaction-size", String(transactionSize),
                               "--pipeline", String(pipeline), try dir.file("mixed.jsonl", lines)])
        #expect(run.status != 0, "rejected lines make the exit non-zero")
        let summary = try run.object()
        let errors = try #require(summary["errors"] as? [[String: Any]])
        #expect(errors.compactMap { $0["line"] as? Int } == bad.keys.sorted())
        for error in errors {
            let line = try #require(error["line"] as? Int)
            if let field = bad[line] ?? nil {
                #expect((error["field"] as? String)?.hasPrefix(field) == true, "line \(line): \(error)")
            }
            #expect(!(error["message"] as? String ?? "").isEmpty)
        }
        #expect(summary["rejected"] as? Int == bad.count)
        #expect(summary["applied"] as? Int == Sample.good.count)
        #expect(summary["droppedUpdates"] as? Int == 1)
        // Human-readable reports on stderr too, one per rejected line.
        #expect(run.stderr.split(separator: "\n").count == bad.count)

        let clean = try CLI.run(["apply", "--store", dir.sub("clean"), "--json", try dir.file("good.jsonl", Sample.good)])
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(jsonEqual(try Self.views(dir.sub("mixed")), try Self.views(dir.sub("clean"))))
    }

    @Test("standard input, lines without \"at\" use the clock, blank lines skipped")
    func standardInput() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let before = Date()
        let input = Sample.good[0] + "\n\n" + #"{"op":"createActivity","activity":"c","activityType":"com.example.app.viewOrder","device":"d"}"# + "\n"
        let run = try CLI.run(["apply", "--store", dir.path, "--json", "-"], input: input)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try run.object()["applied"] as? Int == 2)
        let log = try CLI.run(["log", "--store", dir.path, "--json", "--from", "2"])
        let event = try #require(try JSONSerialization.jsonObject(with: Data(log.stdout.utf8)) as? [String: Any])
        let at = try #require(event["at"] as? String)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try #require(formatter.date(from: at) ?? ISO8601DateFormatter().date(from: at))
        #expect(date >= before.addingTimeInterval(-1) && date <= Date().addingTimeInterval(1))
    }

    @Test("a batch left open at the end of the input is rejected whole")
    func unterminatedBatch() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let lines = [
            #"{"op":"beginIndexBatch","index":"ix"}"#,
            #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"i1"}]}"#,
        ]
        let run = try CLI.run(["apply", "--store", dir.path, "--json", try dir.file("open.jsonl", lines)])
        #expect(run.status != 0)
        let summary = try run.object()
        #expect((summary["errors"] as? [[String: Any]])?.compactMap { $0["line"] as? Int } == [1, 2])
        #expect(try CLI.run(["items", "--store", dir.path, "--json"]).objects().isEmpty)
    }

    @Test("a missing file is an error naming it; nothing is created")
    func missingFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let run = try CLI.run(["apply", "--store", dir.sub("store"), dir.sub("nope.jsonl")])
        #expect(run.status != 0)
        #expect(run.stderr.contains("nope.jsonl"))
        #expect(!FileManager.default.fileExists(atPath: dir.sub("store")))
    }
}
