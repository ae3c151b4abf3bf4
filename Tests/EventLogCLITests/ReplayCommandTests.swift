import Foundation
import Testing

@Suite("replay and snapshot")
struct ReplayCommandTests {
    @Test("replay --verify says equal; replay from a snapshot and --full give the same views")
    func rebuild() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        let before = try ApplyTests.views(store)

        let verify = try CLI.run(["replay", "--store", store, "--verify", "--json"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(try verify.object()["equal"] as? Bool == true)

        let create = try CLI.run(["snapshot", "create", "--store", store, "--json"])
        #expect(create.status == 0, "\(create.stderr)")
        let position = try #require(try create.object()["position"] as? Int)
        let list = try CLI.run(["snapshot", "list", "--store", store, "--json"]).objects()
        // The views' snapshot and the index's (the index applied through the head too).
        #expect(list.map { $0["position"] as? Int } == [position, position])
        #expect(list.map { $0["kind"] as? String } == ["views", "index"])
        #expect(list.allSatisfy { $0["valid"] as? Bool == true })

        let fromSnapshot = try CLI.run(["replay", "--store", store, "--json"])
        #expect(fromSnapshot.status == 0, "\(fromSnapshot.stderr)")
        #expect(try fromSnapshot.object()["snapshot"] as? Int == position)
        #expect(jsonEqual(try ApplyTests.views(store), before))

        let full = try CLI.run(["replay", "--store", store, "--full", "--json"])
        #expect(full.status == 0, "\(full.stderr)")
        #expect(try full.object()["snapshot"] == nil)
        #expect(jsonEqual(try ApplyTests.views(store), before))

        #expect(try CLI.run(["snapshot", "delete", "--store", store, String(position)]).status == 0)
        #expect(try CLI.run(["snapshot", "delete", "--store", store, String(position), "--index"]).status == 0)
        #expect(try CLI.run(["snapshot", "list", "--store", store, "--json"]).objects().isEmpty)
        #expect(try CLI.run(["snapshot", "delete", "--store", store, String(position)]).status != 0)
    }

    @Test("replay --read-ahead 0 rebuilds on one thread to the same views; a size out of range is refused with the allowed range")
    func readAhead() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        let before = try ApplyTests.views(store)
        let verify = try CLI.run(["replay", "--store", store, "--verify", "--read-ahead", "0", "--json"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(try verify.object()["equal"] as? Bool == true)
        let full = try CLI.run(["replay", "--store", store, "--full", "--read-ahead", "1", "--json"])
        #expect(full.status == 0, "\(full.stderr)")
        #expect(jsonEqual(try ApplyTests.views(store), before))
        for bad in ["-1", "4097"] {
            let run = try CLI.run(["replay", "--store", store, "--full", "--read-ahead=\(bad)"])
            #expect(run.status != 0)
            #expect(run.stderr.contains("--read-ahead is \(bad) MiB; it must be 0 (one thread) to 4096"), "\(run.stderr)")
        }
    }

    @Test("replay --to P --into DIR equals a store that only ever saw positions 1…P")
    func timeTravel() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let prefix = Array(Sample.good.prefix(9))
        let partial = try CLI.run(["apply", "--store", dir.sub("partial"), "--json", try dir.file("prefix.jsonl", prefix)])
        #expect(partial.status == 0)
        let head = try #require(try partial.object()["head"] as? Int)
        let travel = try CLI.run(["replay", "--store", dir.sub("store"), "--to", String(head), "--into", dir.sub("then"), "--json"])
        #expect(travel.status == 0, "\(travel.stderr)")
        #expect(try travel.object()["position"] as? Int == head)
        #expect(jsonEqual(try ApplyTests.views(dir.sub("then")), try ApplyTests.views(dir.sub("partial"))))
        #expect(try CLI.run(["verify", "--store", dir.sub("then")]).status == 0)
    }

    @Test("verify names a damaged snapshot")
    func damagedSnapshot() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        let path = try #require(try CLI.run(["snapshot", "create", "--store", store, "--json"]).object()["path"] as? String)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count / 2] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let run = try CLI.run(["verify", "--store", store, "--json"])
        #expect(run.status != 0)
        let snapshots = try #require(try run.object()["snapshots"] as? [[String: Any]])
        #expect(snapshots.first?["valid"] as? Bool == false)
        // The rebuild falls back to the log and still gives the same views.
        let before = try ApplyTests.views(store)
        let rebuild = try CLI.run(["replay", "--store", store, "--json"])
        #expect(rebuild.status == 0, "\(rebuild.stderr)")
        #expect(try rebuild.object()["snapshot"] == nil)
        #expect(jsonEqual(try ApplyTests.views(store), before))
    }
}
