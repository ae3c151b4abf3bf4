import Foundation
import Testing

/// `Scripts/verify_log.py` reads an activity store's log without this code:
/// `Docs/LogFormat.md`, Python's `lmdb` and `zstandard`, and the schema
/// (`Sources/ActivityDomain/Schema/*.proto`, read by `Scripts/log_payloads.py`,
/// no generated code). Its `--json` prints every record as `eventlog log
/// --json` does; here the two agree on every record and every field, on the
/// committed fixtures, on compacted copies of them, and on a compressed
/// log with dictionaries, redactions and every kind of value.
@Suite("The independent reader decodes every payload as eventlog log --json prints it", .serialized)
struct IndependentDecoderTests {
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let script = tests.appendingPathComponent("../Scripts/verify_log.py").standardizedFileURL.path

    /// The reader's `--json` lines (stdout) and its report (stderr).
    static func reader(_ store: String, _ extra: [String] = []) throws -> CLIResult {
        try CLI.run([script, store, "--json"] + extra, executable: URL(fileURLWithPath: "/usr/bin/python3"))
    }

    /// Compares two JSON Lines files value by value (an integer and a double
    /// of one value are equal, as JSON does not tell them apart; a boolean is
    /// never a number) and prints how many lines and decoded events agree, or
    /// the first line that differs.
    static let compare = #"""
        import json, sys
        def same(a, b):
            if isinstance(a, bool) or isinstance(b, bool):
                return type(a) is type(b) and a == b
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                return a == b
            if isinstance(a, dict) and isinstance(b, dict):
                return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
            if isinstance(a, list) and isinstance(b, list):
                return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
            return type(a) is type(b) and a == b
        engine = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
        reader = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
        for n, (a, b) in enumerate(zip(engine, reader)):
            if not same(a, b):
                print(f"line {n + 1} differs:\n engine {json.dumps(a, ensure_ascii=False)}\n reader {json.dumps(b, ensure_ascii=False)}")
                sys.exit(1)
        if len(engine) != len(reader):
            print(f"the engine printed {len(engine)} lines, the reader {len(reader)}")
            sys.exit(1)
        print(f"same: {len(engine)} lines, {sum('event' in a for a in engine)} events, {sum('redacted' in a for a in engine)} redacted")
        """#

    /// `eventlog log --json` on `store` and the reader's `--json` on
    /// `readerStore` (the same log: by default `store` itself) agree line by
    /// line; the reader verifies the log to the engine's last link. Returns the
    /// reader's report and the comparison's summary.
    @discardableResult
    static func expectSameRecords(_ store: String, reading readerStore: String? = nil, _ dir: TemporaryDirectory,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws -> (report: String, summary: String) {
        let log = try CLI.run(["log", "--json", "--store", store])
        #expect(log.status == 0, "\(log.stderr)", sourceLocation: sourceLocation)
        let verify = try CLI.run(["verify", "--json", "--store", store])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)", sourceLocation: sourceLocation)
        let lastLink = try #require(try verify.object()["lastLink"] as? String, sourceLocation: sourceLocation)
        let reader = try reader(readerStore ?? store)
        #expect(reader.status == 0, "\(reader.stderr)", sourceLocation: sourceLocation)
        #expect(reader.stderr.contains("last link \(lastLink)"), "\(reader.stderr)", sourceLocation: sourceLocation)
        let engineFile = try dir.file("engine-\(UUID().uuidString).jsonl", [log.stdout])
        let readerFile = try dir.file("reader-\(UUID().uuidString).jsonl", [reader.stdout])
        let compared = try CLI.run(["-c", compare, engineFile, readerFile], executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(compared.status == 0, "\(compared.stdout)\(compared.stderr)", sourceLocation: sourceLocation)
        return (reader.stderr, compared.stdout)
    }

    /// The count in "N label" of `text` (e.g. "12 events"), or nil.
    static func count(_ label: String, in text: String) -> Int? {
        guard let range = text.range(of: #"(\d+) \#(label)"#, options: .regularExpression) else { return nil }
        return Int(text[range].split(separator: " ")[0])
    }

    static let fixtures = ["ActivityDomainTests/Fixtures/schema-v1", "ActivityDomainTests/Fixtures/schema-v2",
                           "ActivityDomainTests/Fixtures/index-v12", "EventLogTests/Fixtures/format-2"]

    /// The reader reads each fixture as committed. `eventlog` reads a copy it
    /// opened for writing first (`replay`: the views of this version, and the
    /// databases a store older than redaction lacks; the records stay as
    /// committed, as the last link shows), or compacted first (`compact`,
    /// then `replay`: the records rewritten compressed, read by both).
    @Test("the committed fixtures, as committed and (activity stores) compacted into compressed records", arguments: fixtures, [false, true])
    func fixture(_ fixture: String, compacted: Bool) throws {
        guard !(compacted && fixture.hasPrefix("EventLogTests")) else { return }  // not an activity store: `eventlog compact` is the activity store's
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let committed = dir.sub("committed"), store = dir.sub("store")
        try FileManager.default.copyItem(atPath: Self.tests.appendingPathComponent(fixture).path, toPath: committed)
        try FileManager.default.copyItem(atPath: committed, toPath: store)
        for command in (compacted ? ["compact", "replay"] : ["replay"]) {
            let run = try CLI.run([command, "--store", store])
            #expect(run.status == 0, "\(command): \(run.stderr)")
        }
        let (report, summary) = try Self.expectSameRecords(store, reading: compacted ? store : committed, dir)
        let records = try #require(Self.count("records,", in: report), "\(report)")
        #expect(Self.count("lines", in: summary) == records, "\(summary)")
        if fixture.hasPrefix("ActivityDomainTests") {
            // Every record is an activity event: every one decoded, by both.
            #expect(Self.count("events", in: summary) == records, "\(summary)")
            #expect(Self.count("decoded with the schema", in: report) == records, "\(report)")
            if compacted { #expect((Self.count("records compressed", in: report) ?? 0) > 0, "\(report)") }
        } else {
            // Compressed records of types no schema names: decompressed and verified, not decoded.
            #expect(report.contains("300 records compressed, 1 dictionaries"), "\(report)")
            #expect(Self.count("events", in: summary) == 0, "\(summary)")
        }
    }

    /// Lines that give every field and every kind of value of the schema:
    /// userInfo of each type, nested; the whole attribute set; URLs, dates
    /// with fractions, an expiration; merges, dropped updates, deletions of
    /// each kind, a purge, an index batch with an expected client state.
    static let everyValue: [String] = [
        #"{"op":"createActivity","user":"erin","activity":"e1","activityType":"com.example.app.viewOrder","device":"watch","title":"Every value","userInfo":{"i":-7,"d":2.5,"neg":-0.125,"big":9007199254740993,"t":true,"f":false,"n":null,"arr":[1,"x",[true,{"$date":"2026-11-22T10:00:00.5Z"}]],"dict":{"k":{"$url":"https://example.com/a?b=1"}},"u":{"$uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"},"when":{"$date":"2026-11-22T10:00:00.123456Z"},"raw":{"$data":"AAEC/w=="},"tagged":{"$dictionary":{"$x":1}},"zero":0,"dzero":0.0,"empty":""},"requiredUserInfoKeys":["i","d"],"keywords":["ünïcode","抹茶","coffee"],"persistentIdentifier":"p-erin","targetContentIdentifier":"t/erin","webpageURL":"https://example.com/w","referrerURL":"https://example.com/r","expirationDate":"2027-01-01T00:00:00Z","eligibleForSearch":true,"eligibleForPrediction":true,"contentAttributeSet":{"title":"T","displayName":"D","contentDescription":"CD","keywords":["k"],"authorNames":["A","B"],"comment":"C","contentType":"public.text","contentCreationDate":"2026-01-01T00:00:00Z","contentModificationDate":"2026-01-02T00:00:00.5Z","rating":4.25,"latitude":-33.5,"longitude":151.0,"thumbnailData":"AAEC"},"appEntityIdentifier":"entity-1","at":"2026-11-30T00:00:01Z"}"#,
        #"{"op":"becomeCurrent","user":"erin","activity":"e1","at":"2026-11-30T00:00:02Z"}"#,
        #"{"op":"updateActivity","user":"erin","activity":"e1","title":null,"webpageURL":null,"contentAttributeSet":null,"eligibleForHandoff":false,"at":"2026-11-30T00:00:03Z"}"#,
        #"{"op":"addUserInfoEntries","user":"erin","activity":"e1","entries":{"i":8,"more":[]},"at":"2026-11-30T00:00:04Z"}"#,
        #"{"op":"createActivity","user":"erin","activity":"e2","activityType":"com.example.app.viewOrder","device":"watch","eligibleForSearch":true,"persistentIdentifier":"p-erin","at":"2026-11-30T00:00:05Z"}"#,
        #"{"op":"becomeCurrent","user":"erin","activity":"e2","at":"2026-11-30T00:00:06Z"}"#,
        #"{"op":"resignCurrent","user":"erin","activity":"e2","at":"2026-11-30T00:00:07Z"}"#,
        #"{"op":"invalidate","user":"erin","activity":"e2","at":"2026-11-30T00:00:08Z"}"#,
        #"{"op":"beginIndexBatch","user":"erin","index":"erin-index","at":"2026-11-30T00:00:09Z"}"#,
        #"{"op":"indexSearchableItems","user":"erin","items":[{"uniqueIdentifier":"x1","domainIdentifier":"a.b","expirationDate":"2026-12-01T00:00:00.25Z","attributeSet":{"title":"X one","rating":0,"latitude":0.1,"thumbnailData":""}},{"uniqueIdentifier":"x2","attributeSet":{"keywords":["k1","k2"],"contentCreationDate":"1969-12-31T23:59:59.999999Z"}}],"at":"2026-11-30T00:00:09Z"}"#,
        #"{"op":"endIndexBatch","user":"erin","index":"erin-index","clientState":"AA==","at":"2026-11-30T00:00:09Z"}"#,
        #"{"op":"beginIndexBatch","user":"erin","index":"erin-index","at":"2026-11-30T00:00:10Z"}"#,
        #"{"op":"indexSearchableItems","user":"erin","items":[{"uniqueIdentifier":"x2","isUpdate":true,"attributeSet":{"title":"X two","keywords":null}},{"uniqueIdentifier":"ghost","isUpdate":true,"attributeSet":{"title":"g"}}],"at":"2026-11-30T00:00:10Z"}"#,
        #"{"op":"endIndexBatch","user":"erin","index":"erin-index","clientState":"AQI=","expectedClientState":"AA==","at":"2026-11-30T00:00:10Z"}"#,
        #"{"op":"deleteSearchableItems","user":"erin","identifiers":["x2","nothing"],"at":"2026-11-30T00:00:11Z"}"#,
        #"{"op":"purgeExpired","user":"erin","now":"2026-12-02T00:00:00Z","at":"2026-11-30T00:00:12Z"}"#,
        #"{"op":"indexSearchableItems","user":"erin","items":[{"uniqueIdentifier":"y1","domainIdentifier":"a.b.c"}],"at":"2026-11-30T00:00:13Z"}"#,
        #"{"op":"deleteSearchableItemsInDomains","user":"erin","domains":["a"],"at":"2026-11-30T00:00:14Z"}"#,
        #"{"op":"deleteAllSearchableItems","user":"erin","at":"2026-11-30T00:00:15Z"}"#,
        #"{"op":"deleteSavedUserActivities","user":"erin","persistentIdentifiers":["p-erin"],"at":"2026-11-30T00:00:16Z"}"#,
        #"{"op":"deleteAllSavedUserActivities","user":"erin","at":"2026-11-30T00:00:17Z"}"#,
    ]

    @Test("a compressed log with dictionaries, redacted records and every kind of value: every record decoded as the engine prints it")
    func compressedLog() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        let lines = Stores.operations(users: ["alice", "bob", "carol", "dave"], marked: "alice", rounds: 12, longTexts: true) + Self.everyValue
        let apply = try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl", lines)])
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(try CLI.run(["forget", "--store", store, "--user", "alice"]).status == 0)
        let compact = try CLI.run(["compact", "--store", store])
        #expect(compact.status == 0, "\(compact.stderr)")

        let (report, summary) = try Self.expectSameRecords(store, dir)
        let records = try #require(Self.count("records,", in: report), "\(report)")
        #expect(Self.count("lines", in: summary) == records, "\(summary)")
        let redacted = try #require(Self.count("redacted", in: summary), "\(summary)")
        #expect(redacted > 0)
        // Most records that keep a payload are stored compressed, with a dictionary.
        #expect((Self.count("records compressed", in: report) ?? 0) > (records - redacted) / 2, "\(report)")
        #expect((Self.count("dictionaries", in: report) ?? 0) >= 1, "\(report)")
        // Every record but the redacted ones and the redaction record itself is decoded.
        #expect(Self.count("events", in: summary) == records - redacted - 1, "\(summary)")
        #expect(Self.count("decoded with the schema", in: report) == records - redacted - 1, "\(report)")
        // Every event type of the schema is among them.
        let log = try CLI.run(["log", "--json", "--store", store])
        let types = Set(log.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["type"] as? String
        })
        #expect(types.count == 17, "\(types.sorted())")
    }

    @Test("a payload that does not decode with the schema: the reader and the engine name the same position")
    func undecodable() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        try FileManager.default.copyItem(atPath: Self.tests.appendingPathComponent("ActivityDomainTests/Fixtures/schema-v2").path, toPath: store)
        #expect(try CLI.run(["replay", "--store", store]).status == 0)  // this version's databases (see `fixture`)
        // A record of a known type whose payload is not its message (a string
        // field that is not UTF-8), with a digest, link and checksum that hold.
        let appended = try CLI.run([store], executable: URL(fileURLWithPath: "/usr/bin/python3"), prefix: ["-c", Self.appendUndecodable])
        #expect(appended.status == 0, "\(appended.stdout)\(appended.stderr)")
        let verify = try CLI.run(["verify", "--json", "--store", store])
        let problem = try #require(try verify.object()["problem"] as? [String: Any], "\(verify.stdout)")
        #expect(problem["kind"] as? String == "undecodablePayload")
        #expect(problem["position"] as? Int == 40)
        let reader = try CLI.run([Self.script, store], executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(reader.status == 1)
        #expect(reader.stdout.hasPrefix("position 40: undecodablePayload"), "\(reader.stdout)")
        // Without the schema it verifies: the record itself is whole.
        let raw = try CLI.run([Self.script, store, "--no-schema"], executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(raw.status == 0, "\(raw.stdout)")
    }

    /// Appends to the log of argv[1] an `activity.invalidated` record (format 2,
    /// not compressed) whose field 1 is not UTF-8, with its digest, link, head and checksum.
    static let appendUndecodable = #"""
        import hashlib, struct, sys, lmdb
        def crc32c(data):
            crc = 0xFFFFFFFF
            for b in data:
                crc ^= b
                for _ in range(8):
                    crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
            return crc ^ 0xFFFFFFFF
        env = lmdb.open(sys.argv[1], max_dbs=128, subdir=True)
        log, meta = env.open_db(b"log", create=False), env.open_db(b"meta", create=False)
        with env.begin(write=True) as txn:
            head = txn.get(b"head", db=meta)
            position, link = struct.unpack(">Q", head[:8])[0] + 1, head[8:]
            rtype, payload, version, micros = b"activity.invalidated", b"\x0a\x02\xff\xfe\x12\x01d", 2, 1795000000000000
            digest = hashlib.sha256(payload).digest()
            new_link = hashlib.sha256(link + struct.pack(">QIq", position, version, micros) + digest + rtype).digest()
            record = struct.pack(">BBHIqI", 2, 0, len(rtype), version, micros, len(payload)) + digest + new_link + rtype + payload
            record += struct.pack(">I", crc32c(record))
            txn.put(struct.pack(">Q", position), record, db=log)
            txn.put(b"head", struct.pack(">Q", position) + new_link, db=meta)
        print(position)
        """#
}
