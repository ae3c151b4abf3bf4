import Foundation
import Testing

/// A forget shipped (SPEC §10, §11): the rows of the redacted records lose
/// their payloads in PostgreSQL, followers redact theirs, and a restore
/// never brings the user back. Against a real server (Scripts/with-postgres.sh).
@Suite("A forget shipped to PostgreSQL", .serialized, .enabled(if: Postgres.enabled))
struct ShippingForgetTests {
    static let marker = "ZEDMARK"
    /// base64 of "ZEDMARK-state".
    static let stateBase64 = Data("\(marker)-state".utf8).base64EncodedString()

    /// zed's operations `part` (1 or 2), with the marker in titles,
    /// keywords, userInfo, item texts and a client state.
    static func zed(_ part: Int, at start: Int) -> [String] {
        let t = { (i: Int) in ShippingSample.time(start + i) }
        return [
            #"{"op":"createActivity","activity":"z\#(part)","activityType":"com.example.app.viewOrder","device":"phone","user":"zed","title":"Latte \#(marker)-title\#(part)","userInfo":{"note":"\#(marker)-info"},"eligibleForSearch":true,"persistentIdentifier":"z-order-\#(part)","keywords":["\#(marker)-keyword"],"at":"\#(t(0))"}"#,
            #"{"op":"becomeCurrent","user":"zed","activity":"z\#(part)","at":"\#(t(1))"}"#,
            #"{"op":"beginIndexBatch","user":"zed","index":"idx"}"#,
            #"{"op":"indexSearchableItems","user":"zed","items":[{"uniqueIdentifier":"z-item-\#(part)","domainIdentifier":"menu","attributeSet":{"title":"coffee \#(marker)-item"}}],"at":"\#(t(2))"}"#,
            #"{"op":"endIndexBatch","user":"zed","index":"idx","clientState":"\#(stateBase64)","expectedClientState":null,"at":"\#(t(2))"}"#,
        ]
    }

    static func forget(at i: Int) -> String { #"{"op":"forgetUser","user":"zed","at":"\#(ShippingSample.time(i))"}"# }

    private func apply(_ store: String, _ lines: [String], in dir: TemporaryDirectory) throws {
        let result = try CLI.run(["apply", "--store", store, try dir.file("ops-\(UUID().uuidString).jsonl", lines)])
        #expect(result.status == 0 && !result.stderr.contains("rejected"), "apply: \(result.stdout) \(result.stderr)")
    }

    private func run(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let result = try CLI.run(arguments + ["--json"])
        #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stderr)", sourceLocation: sourceLocation)
        return (try? result.object()) ?? [:]
    }

    @Test("ship, forget, ship: no row keeps the user's bytes, the rows are the leader's; followers before and after, and restores, equal the leader and never show the user")
    func forgetShipped() async throws {
        try await Postgres.shared { try forgetShippedWhileTheServerRuns() }
    }

    private func forgetShippedWhileTheServerRuns() throws {
        let url = try Postgres.requireURL()
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let stream = Postgres.stream("forget")
        let leader = dir.sub("leader"), before = dir.sub("before"), after = dir.sub("after")
        try apply(leader, [ShippingSample.declare()] + ShippingSample.operations(0..<24) + Self.zed(1, at: 100) + ShippingSample.operations(24..<36), in: dir)
        _ = try run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once", "--batch", "7"])
        _ = try run(["follow", "--store", before, "--from", url, "--stream", stream, "--once"])
        #expect(try Postgres.rowsContaining(Self.marker, stream: stream) > 0)
        #expect(try StoreView(before).reads["users"]?.contains("zed") == true)

        // zed acts again, then is forgotten, while the shipper is not running.
        try apply(leader, Self.zed(2, at: 200) + ShippingSample.operations(36..<48), in: dir)
        let beforeForget = try StoreView(leader).head
        try apply(leader, [Self.forget(at: 300)] + ShippingSample.operations(48..<60), in: dir)
        let leaderView = try StoreView(leader)
        #expect(!leaderView.reads.values.contains { $0.contains(Self.marker) })
        // Shipped in small batches: the one that meets zed's redacted records
        // reaches on to the forget; the rows of zed's first records are rewritten.
        let shipped = try run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once", "--batch", "3"])
        #expect(shipped["streamHead"] as? Int == leaderView.head)

        // PostgreSQL: no row holds the marker; every row is the leader's record, byte for byte.
        #expect(try Postgres.rowsContaining(Self.marker, stream: stream) == 0)
        let leaderLog = try Postgres.logDump(leader)
        #expect(leaderLog.split(separator: "\n").count == leaderView.head)
        #expect(try Postgres.streamDump(stream) == leaderLog, "the stream's rows differ from the leader's log")
        let redactedBy = try Postgres.psql("SELECT DISTINCT redacted_by FROM eventlog_redactions WHERE stream = '\(stream)'")
        #expect(redactedBy.trimmingCharacters(in: .whitespacesAndNewlines) == "\(beforeForget + 1)", "eventlog_redactions: \(redactedBy)")

        // The follower from before the forget redacts what it holds.
        _ = try run(["follow", "--store", before, "--from", url, "--stream", stream, "--once"])
        #expect(try Postgres.logDump(before) == leaderLog)
        #expect(try StoreView(before) == leaderView)
        try expectViewsVerify(before)
        #expect((try run(["verify", "--store", before])["pendingRedactions"] as? [Any])?.isEmpty == true)
        #expect(!(try StoreView(before).reads["users"] ?? "zed").contains("zed"))

        // A follower from scratch, and a restore.
        _ = try run(["follow", "--store", after, "--from", url, "--stream", stream, "--once"])
        #expect(try Postgres.logDump(after) == leaderLog)
        #expect(try StoreView(after) == leaderView)
        try expectViewsVerify(after)
        let restored = dir.sub("restored")
        _ = try run(["restore", "--from", url, "--stream", stream, "--into", restored])
        #expect(try Postgres.logDump(restored) == leaderLog)
        #expect(try StoreView(restored) == leaderView)
        try expectViewsVerify(restored)

        // restore --to P, P after zed's last records and before the forget:
        // verify lists the forget as pending, and zed is nowhere.
        let partial = dir.sub("partial")
        _ = try run(["restore", "--from", url, "--stream", stream, "--into", partial, "--to", "\(beforeForget)"])
        let verify = try run(["verify", "--store", partial])
        #expect(verify["valid"] as? Bool == true)
        let pending = try #require(verify["pendingRedactions"] as? [[String: Any]])
        #expect(pending.count == 1 && pending[0]["position"] as? Int == beforeForget + 1, "\(pending)")
        #expect((pending.first?["covers"] as? Int ?? 0) > 0)
        let partialView = try StoreView(partial)
        #expect(!partialView.reads.values.contains { $0.contains(Self.marker) })
        #expect(!(partialView.reads["users"] ?? "zed").contains("zed"))
        #expect(!(try Postgres.logDump(partial)).contains(Data(Self.marker.utf8).map { String(format: "%02x", $0) }.joined()))
        try expectViewsVerify(partial)
        let text = try CLI.run(["verify", "--store", partial])
        #expect(text.status == 0 && text.stdout.contains("pending: ") && text.stdout.contains("position \(beforeForget + 1)"), "\(text.stdout)")
        // Followed on, it becomes the leader.
        _ = try run(["follow", "--store", partial, "--from", url, "--stream", stream, "--once"])
        #expect(try Postgres.logDump(partial) == leaderLog)
        #expect(try StoreView(partial) == leaderView)
    }
}
