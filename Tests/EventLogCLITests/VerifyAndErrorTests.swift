import Foundation
import Testing

@Suite("verify, errors, demo")
struct VerifyAndErrorTests {
    @Test("verify: a sound store exits 0")
    func sound() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let run = try CLI.run(["verify", "--store", dir.sub("store"), "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try run.object()
        #expect(report["valid"] as? Bool == true)
        #expect(report["recordsChecked"] as? Int == report["head"] as? Int)
        #expect(report["problem"] == nil)
    }

    /// A flipped byte in one record's payload, written straight into
    /// `data.mdb` while no process has the store open (a disk fault): LMDB
    /// keeps no checksums of its own, the record's CRC-32C catches it.
    @Test("verify: a flipped byte in the log exits non-zero naming the position")
    func flippedByte() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        // A marker only this event's payload carries: the ids asked for are
        // recorded, and none matched a saved copy, so no view holds it.
        let marker = "QQMARKERQQ"
        let apply = try CLI.run(["apply", "--store", store, "--json", "-"],
                                input: #"{"op":"deleteSavedUserActivities","persistentIdentifiers":["\#(marker)"]}"# + "\n")
        #expect(apply.status == 0)
        let head = try #require(try apply.object()["head"] as? Int)

        let file = (store as NSString).appendingPathComponent("data.mdb")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let needle = Array(marker.utf8)
        var flipped = 0
        // Every copy: LMDB's copy-on-write may leave older pages holding it.
        var i = 0
        while i + needle.count <= bytes.count {
            if bytes[i] == needle[0] && Array(bytes[i..<(i + needle.count)]) == needle {
                bytes[i + 4] ^= 0x01
                flipped += 1
                i += needle.count
            } else {
                i += 1
            }
        }
        #expect(flipped >= 1)
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let run = try CLI.run(["verify", "--store", store, "--json"])
        #expect(run.status != 0)
        let report = try run.object()
        #expect(report["valid"] as? Bool == false)
        let problem = try #require(report["problem"] as? [String: Any])
        #expect(problem["position"] as? Int == head)
        #expect(problem["kind"] as? String == "checksumMismatch")
        #expect(run.stderr.contains("position \(head)"))
    }

    @Test("a read command on a missing store fails naming the path, and creates nothing")
    func missingStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        for command in [["current"], ["saved"], ["items"], ["log"], ["stats"], ["verify"], ["resolve", "x"],
                        ["search", "x"], ["query", #"title == "x""#], ["client-state"],
                        ["handoff", "--user", "u", "--device", "d"]] {
            let run = try CLI.run(command + ["--store", dir.sub("missing"), "--json"])
            #expect(run.status != 0, "\(command)")
            #expect(run.stderr.contains(dir.sub("missing")), "\(command): \(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.sub("missing") + "/data.mdb"))
    }

    @Test("a bad option value exits non-zero naming the option")
    func badOption() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let run = try CLI.run(["handoff", "--store", dir.sub("store"), "--user", "u1", "--device", "d", "--now", "yesterday"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--now"))
        let size = try CLI.run(["apply", "--store", dir.sub("store"), "--transaction-size", "0", "-"])
        #expect(size.status != 0)
        #expect(size.stderr.contains("--transaction-size"))
    }

    @Test("demo: applies its sample to a fresh store, which then verifies and answers")
    func demo() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let run = try CLI.run(["demo", "--store", dir.sub("demo")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty)
        let current = try CLI.run(["current", "--store", dir.sub("demo"), "--user", "alice", "--json"]).objects()
        #expect(current.count >= 2)
        let users = try CLI.run(["users", "--store", dir.sub("demo"), "--json"]).objects()
        #expect(users.map { $0["user"] as? String } == ["", "alice", "bob", "hanako"])
        let items = try CLI.run(["items", "--store", dir.sub("demo"), "--json"]).objects()
        #expect(!items.isEmpty)
        #expect(try CLI.run(["verify", "--store", dir.sub("demo")]).status == 0)
        // A second demo into the same directory is refused: it needs a fresh store.
        #expect(try CLI.run(["demo", "--store", dir.sub("demo")]).status != 0)
    }

    @Test("help: every subcommand documents itself")
    func help() throws {
        for command in ["apply", "log", "current", "saved", "handoff", "resolve", "items", "search", "query", "replay",
                        "client-state", "stats", "verify", "forget", "demo"] {
            let run = try CLI.run([command, "--help"])
            #expect(run.status == 0, "\(command)")
            #expect(run.stdout.contains("--store") || command == "demo", "\(command)")
        }
    }
}
