import Foundation
import Testing

/// `eventlog compact` (SPEC §10, issue 12): after a forget, no byte of the
/// user's data is left in any file of the store; a compaction killed at any
/// point leaves the store whole; it is refused while another process has the
/// store open, and opens are refused while it runs.
@Suite("compact", .serialized)
struct CompactionTests {
    static let now = "2026-12-01T00:00:00Z"

    /// The markers in alice's data: each field of hers carries one (titles,
    /// keywords, userInfo strings and data, saved copies' identifiers, item
    /// identifiers, domains, texts and keywords, client-state index names and
    /// states), so that a byte left anywhere names the field it came from.
    static let markers = ["QZXTITLE", "QZXUPDATED", "QZXKEYWORD", "QZXINFO", "QZXDATA", "QZXENTRY", "QZXPID", "QZXACT",
                          "QZXITEM", "QZXDOMAIN", "QZXITEMTITLE", "QZXDESC", "QZXITEMKW", "QZXINDEX", "QZXSTATE"]

    /// Every read of `user` the command line offers, by command.
    static func reads(_ store: String, user: String) throws -> [String: String] {
        let now = ["--now", Self.now]
        var reads: [String: String] = [:]
        for read in [["current"], ["saved"], ["items"], ["items", "--domain", "\(user)DOMAIN1"], ["search", "coffee"] + now,
                     ["search", "arabica beans"] + now, ["query", #"keywords == "coffee""#] + now, ["query", #"title == "Oat*""#] + now,
                     ["client-state"], ["suggestions"] + now, ["handoff", "--device", "tablet"] + now] {
            let result = try CLI.run(read + ["--user", user, "--store", store, "--json"])
            #expect(result.status == 0, "\(read) --user \(user): \(result.stderr)")
            reads[read.joined(separator: " ")] = result.stdout
        }
        return reads
    }

    /// The files under `directory` (recursively) whose bytes contain `needle`.
    static func files(under directory: String, containing needles: [[UInt8]]) throws -> [String] {
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let name = enumerator?.nextObject() as? String {
            let path = (directory as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            for needle in needles where bytes.firstRange(of: needle) != nil {
                found.append("\(name): \(String(decoding: needle, as: UTF8.self))")
            }
        }
        return found
    }

    /// Each marker as written and as the index folds it (lowercase).
    static var markerBytes: [[UInt8]] {
        markers.flatMap { [Array($0.utf8), Array($0.lowercased().utf8)] }
    }

    @Test("forget a user, then compact: no file of the store holds a byte of the user's data; verify, replay --verify; the others read as in a store that never saw the user, the user reads nothing")
    func forgetThenCompact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let users = ["alice", "bob", "carol"]
        let all = Stores.operations(users: users, marked: "alice", rounds: 24, longTexts: true)
        let store = dir.sub("store"), reference = dir.sub("reference")
        // A transaction a line: LMDB recycles the page buffers of one commit
        // in the next, so alice's bytes can end up past the end of others' values.
        let apply = try CLI.run(["apply", "--transaction-size", "1", "--store", store, try dir.file("all.jsonl", all)])
        #expect(apply.status == 0, "\(apply.stderr)")
        // The reference store: the same operations less alice's.
        let others = all.filter { !$0.contains(#""user":"alice""#) }
        #expect(others.count < all.count)
        #expect(try CLI.run(["apply", "--store", reference, try dir.file("others.jsonl", others)]).status == 0)
        let snapshot = try CLI.run(["snapshot", "create", "--store", store, "--json"])
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        // The test can fail: every marker is in the store before the forget.
        let before = try Self.files(under: store, containing: Self.markerBytes)
        // The log stores payloads compressed (Docs/LogFormat.md, "Compressed
        // payloads"): a marker that no file holds as written is in a
        // payload the log decompresses.
        let decoded = try CLI.run(["log", "--store", store, "--json"]).stdout
        for marker in Self.markers {
            #expect(before.contains { $0.hasPrefix("data.mdb: \(marker)") } || decoded.contains(marker),
                    "\(marker) is not in data.mdb before the forget, nor in a payload of its log")
            // The views hold every field but the first titles, which updates
            // replaced, and the items' text, which stays in the log (the item
            // store and the index refer to it: Docs/Architecture.md, "Text kept once").
            let inSnapshot = before.contains { $0.hasPrefix("snapshots/") && $0.hasSuffix(": \(marker)") }
            if ["QZXITEMTITLE", "QZXDESC", "QZXITEMKW"].contains(marker) {
                #expect(!inSnapshot, "\(marker), an item's text, is copied into the views")
            } else if marker != "QZXTITLE" {
                #expect(inSnapshot, "\(marker) is not in the snapshot")
            }
        }
        #expect(try Self.reads(store, user: "alice")["items"] != "[]")

        let forget = try CLI.run(["apply", "--store", store, "-"], input: #"{"op":"forgetUser","user":"alice","at":"2026-12-01T00:00:00Z"}"# + "\n")
        #expect(forget.status == 0, "\(forget.stderr)")
        let afterForget = try Self.files(under: store, containing: Self.markerBytes)
        // Not asserted (page reuse decides it), but what compact is for.
        print("compact test: after the forget, before compact: \(afterForget.count) marker hits: \(afterForget.prefix(6))")

        let compact = try CLI.run(["compact", "--store", store, "--json"])
        #expect(compact.status == 0, "\(compact.stderr)")
        let report = try compact.object()
        let bytesBefore = try #require(report["bytesBefore"] as? Int), bytesAfter = try #require(report["bytesAfter"] as? Int)
        #expect(bytesAfter > 0 && bytesAfter <= bytesBefore, "\(report)")
        #expect(report["head"] as? Int == (try CLI.run(["verify", "--store", store, "--json"]).object()["head"] as? Int))
        // The long values sit on overflow pages whose tails held other pages' bytes (alice's among them).
        let zeroed = report["bytesZeroed"] as? Int ?? 0
        #expect(zeroed > 0, "no overflow page had a stale tail: the test does not reach that case")
        print("compact test: data.mdb \(bytesBefore) -> \(bytesAfter) bytes, \(zeroed) stale bytes zeroed")

        let left = try Self.files(under: store, containing: Self.markerBytes)
        #expect(left.isEmpty, "bytes of the forgotten user remain: \(left)")
        let verify = try CLI.run(["verify", "--store", store])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        try expectViewsVerify(store)
        for user in ["bob", "carol"] {
            let live = try Self.reads(store, user: user), never = try Self.reads(reference, user: user)
            #expect(live["items"] != "[]" && live["search coffee --now \(Self.now)"] != "[]", "the reads find nothing: the comparison proves little")
            for (read, output) in never.sorted(by: { $0.key < $1.key }) {
                #expect(live[read] == output, "\(user): \(read)")
            }
        }
        #expect(try CLI.run(["users", "--store", store, "--json"]).stdout == CLI.run(["users", "--store", reference, "--json"]).stdout)
        for (read, output) in try Self.reads(store, user: "alice").sorted(by: { $0.key < $1.key }) {
            #expect(output == "[]\n", "alice: \(read): \(output)")
        }
        let resolve = try CLI.run(["resolve", "QZXPID5", "--user", "alice", "--store", store, "--json"]).object()
        #expect(resolve["status"] as? String == "unknown", "\(resolve)")
        // The compacted store takes writes, and compacts again.
        let write = try CLI.run(["apply", "--store", store, "-"], input: #"{"op":"indexSearchableItems","user":"bob","items":[{"uniqueIdentifier":"new","attributeSet":{"title":"New"}}],"at":"2026-12-02T00:00:00Z"}"# + "\n")
        #expect(write.status == 0, "\(write.stderr)")
        #expect(try CLI.run(["compact", "--store", store]).status == 0)
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
    }
}
