import Foundation
import Testing

/// What a write accepts, the reads print, and what they print parses back:
/// userInfo as deep as a write takes prints in `log --json` (and the
/// change feed's shape); every time an operation is given (at the edges of
/// the years 0 to 9999, with offsets and long fractions) is refused or
/// printed as a time the same parser takes again.
@Suite("Limits agree between writing and reading")
struct LimitsAgreeTests {
    /// userInfo `{"k": … "x" …}` nested `depth` levels below its top, of dictionaries, arrays or both.
    static func nested(_ depth: Int, _ kind: String) -> String {
        var value = #""x""#
        for level in 0..<depth {
            let array = kind == "arrays" || (kind == "mixed" && level % 2 == 0)
            value = array ? "[\(value)]" : #"{"k":\#(value)}"#
        }
        return value
    }

    @Test("userInfo nested as deep as a write accepts (16 levels of dictionaries, arrays, both), in every operation that takes it: log --json prints every event, saved prints it, one level more is refused")
    func deepUserInfoPrints() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        var lines = [Sample.good[0]]
        for (n, kind) in ["dictionaries", "arrays", "mixed"].enumerated() {
            let value = Self.nested(16, kind)
            lines += [
                #"{"op":"createActivity","activity":"a\#(n)","activityType":"com.example.app.viewOrder","device":"d\#(n)","userInfo":{"deep":\#(value)},"eligibleForSearch":true}"#,
                #"{"op":"updateActivity","activity":"a\#(n)","userInfo":{"deeper":\#(value)}}"#,
                #"{"op":"addUserInfoEntries","activity":"a\#(n)","entries":{"more":\#(value)}}"#,
                #"{"op":"becomeCurrent","activity":"a\#(n)"}"#,
            ]
        }
        let apply = try CLI.run(["apply", "--store", store, try dir.file("deep.jsonl", lines)])
        #expect(apply.status == 0, "\(apply.stderr)")
        let log = try CLI.run(["log", "--store", store, "--json"])
        #expect(log.status == 0, "\(log.stderr)")
        let printed = log.stdout.split(separator: "\n")
        #expect(printed.count >= lines.count, "\(printed.count) events printed for \(lines.count) operations")
        for line in printed { #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil) }
        let saved = try CLI.run(["saved", "--store", store, "--json"])
        #expect(saved.status == 0, "\(saved)")
        #expect(try saved.objects().count == 3, "\(saved)")
        let tooDeep = try CLI.run(["apply", "--store", store, try dir.file("too.jsonl", [
            #"{"op":"addUserInfoEntries","activity":"a0","entries":{"more":\#(Self.nested(17, "dictionaries"))}}"#])])
        #expect(tooDeep.status == 1 && tooDeep.stderr.contains("nested"), "\(tooDeep)")
    }

    /// Every ISO-8601 time in `text`.
    static func times(in text: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: #"-?\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#)
        return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
    }

    @Test("times at the edges of the years 0 to 9999 (long fractions, offsets, a default expiration a month past the last one): each is refused, or printed as a time that parses back")
    func timesPrintAndParseBack() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("declare.jsonl", [Sample.good[0]])]).status == 0)
        let edges = ["9999-12-31T23:59:59.9999999999Z", "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.99999Z", "9999-12-31T23:59:59Z",
                     "9999-12-31T23:30:00-01:00", "9999-12-31T23:30:00+01:00", "9999-12-15T12:00:00Z", "0000-01-01T00:00:00Z",
                     "0000-01-01T00:30:00+01:00", "0000-01-01T00:00:00.0000001Z", "2026-02-28T23:59:59.9999995Z"]
        var accepted = 0
        for (n, time) in edges.enumerated() {
            let lines = [
                #"{"op":"indexSearchableItems","user":"u\#(n)","items":[{"uniqueIdentifier":"i","attributeSet":{"title":"t","contentCreationDate":"\#(time)"}}],"at":"\#(time)"}"#,
                #"{"op":"createActivity","user":"u\#(n)","activity":"a","activityType":"com.example.app.viewOrder","device":"d","userInfo":{"when":{"$date":"\#(time)"}},"eligibleForSearch":true,"expirationDate":"\#(time)","at":"2026-01-01T00:00:00Z"}"#,
            ]
            let run = try CLI.run(["apply", "--store", store, try dir.file("edge-\(n).jsonl", lines)])
            if run.status == 0 { accepted += 1 } else {
                #expect(run.stderr.contains("9999-12-31T23:59:59"), "\(time) refused without the allowed range: \(run.stderr)")
            }
        }
        #expect(accepted >= 6, "\(accepted) of \(edges.count) edge times accepted")
        var printed: [String] = []
        for command in [["log", "--json"], ["items", "--json"], ["saved", "--json"]] {
            for n in 0..<edges.count {
                let run = try CLI.run(command + ["--store", store, "--user", "u\(n)"])
                #expect(run.status == 0, "\(command): \(run.stderr)")
                printed += Self.times(in: run.stdout)
            }
        }
        #expect(printed.count > 20)
        // Every printed time parses back: as a purge's `now`, and as `--now`.
        let purges = Set(printed).sorted().map { #"{"op":"purgeExpired","now":"\#($0)"}"# }
        let again = try CLI.run(["apply", "--store", store, try dir.file("again.jsonl", purges)])
        #expect(again.status == 0, "a printed time does not parse back: \(again.stderr)")
        for time in Set(printed) {
            #expect(time.hasPrefix("0") || time.hasPrefix("1") || time.hasPrefix("2") || time.hasPrefix("9"), "\(time)")
            #expect(!time.hasPrefix("10000") && !time.hasPrefix("-"), "\(time) prints past the years 0 to 9999")
        }
    }
}

extension LimitsAgreeTests {
    @Test("query cost is bounded: 1,000 OR'd comparisons are refused at once; 120 OR'd infix patterns over every document stop with a clear error, never a core held for minutes")
    func queryCostBounded() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        let items = (0..<30).map { batch in
            #"{"op":"indexSearchableItems","items":["# + (0..<100).map { n in
                #"{"uniqueIdentifier":"i\#(batch * 100 + n)","attributeSet":{"title":"title \#(n)","contentDescription":"\#(String(repeating: "lorem ipsum dolor sit amet ", count: 12))"}}"#
            }.joined(separator: ",") + "]}"
        }
        #expect(try CLI.run(["apply", "--store", store, try dir.file("items.jsonl", items)]).status == 0)
        let many = (0..<1_000).map { #"contentDescription == "*xy\#($0)*"cd"# }.joined(separator: " || ")
        let refused = try CLI.runBounded(["query", "--store", store, many, "--json"].map { Array($0.utf8) }, timeout: 20)
        #expect(refused.exited && refused.status == 1 && refused.stderr.contains("1000 comparisons"), "\(refused)")
        let heavy = (0..<120).map { #"contentDescription == "*xy\#($0)*"cd"# }.joined(separator: " || ")
        let stopped = try CLI.runBounded(["query", "--store", store, heavy, "--json"].map { Array($0.utf8) }, timeout: 60)
        // Its work bound stops it; on a slow machine its deadline (5 s) may come first: either is a clear error, in bounded time.
        #expect(stopped.exited && stopped.status == 1
                && (stopped.stderr.contains("query too costly") || stopped.stderr.contains("query stopped at its deadline")), "\(stopped)")
        let fine = try CLI.run(["query", "--store", store, #"contentDescription == "*olo*"cd"#, "--json"])
        #expect(fine.status == 0, "\(fine.stderr)")
        #expect(try fine.objects().count == 3_000)
    }
}
