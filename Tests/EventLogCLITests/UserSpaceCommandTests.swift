import Foundation
import Testing

/// `--user` on the commands that read or change a user's data, `users`, and
/// `suggestions` (SPEC §7, §9).
@Suite("user spaces on the command line")
struct UserSpaceCommandTests {
    static let lines: [String] = [
        #"{"op":"declareActivityTypes","types":["com.example.app.viewOrder"],"at":"2026-11-22T10:00:00Z"}"#,
        #"{"op":"createActivity","user":"alice","activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","title":"Alice's latte","keywords":["coffee"],"eligibleForSearch":true,"eligibleForPrediction":true,"persistentIdentifier":"order-42","at":"2026-11-22T10:00:01Z"}"#,
        #"{"op":"becomeCurrent","user":"alice","activity":"a1","at":"2026-11-22T10:00:02Z"}"#,
        #"{"op":"createActivity","user":"bob","activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","title":"Bob's coffee","keywords":["coffee"],"eligibleForSearch":true,"persistentIdentifier":"order-42","at":"2026-11-22T10:00:03Z"}"#,
        #"{"op":"becomeCurrent","user":"bob","activity":"a1","at":"2026-11-22T10:00:04Z"}"#,
        #"{"op":"indexSearchableItems","user":"bob","items":[{"uniqueIdentifier":"order-1","attributeSet":{"title":"Coffee beans"}}],"at":"2026-11-22T10:00:05Z"}"#,
        #"{"op":"indexSearchableItems","user":"alice","items":[{"uniqueIdentifier":"order-1","attributeSet":{"title":"Tea"}}],"at":"2026-11-22T10:00:06Z"}"#,
        #"{"op":"beginIndexBatch","user":"alice","index":"idx","at":"2026-11-22T10:00:07Z"}"#,
        #"{"op":"endIndexBatch","user":"alice","index":"idx","clientState":"QQ==","at":"2026-11-22T10:00:07Z"}"#,
        #"{"op":"deleteAllSearchableItems","user":"bob","at":"2026-11-22T10:00:08Z"}"#,
    ]

    @Test("each user reads their own data; users lists the spaces; suggestions ranks the user's copies")
    func readsOfOneUser() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        let apply = try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl", Self.lines)])
        #expect(apply.status == 0, "\(apply.stderr)")
        let now = ["--now", "2026-11-22T11:00:00Z"]
        let aliceSaved = try CLI.run(["saved", "--store", store, "--user", "alice", "--json"]).objects()
        #expect(aliceSaved.map { $0["title"] as? String } == ["Alice's latte"])
        let bobSaved = try CLI.run(["saved", "--store", store, "--user", "bob", "--json"]).objects()
        #expect(bobSaved.map { $0["title"] as? String } == ["Bob's coffee"])
        #expect(try CLI.run(["saved", "--store", store, "--json"]).objects().isEmpty, "the default space has nothing")
        let aliceHits = try CLI.run(["search", "coffee", "--store", store, "--user", "alice", "--json"] + now).objects()
        #expect(aliceHits.map { $0["identifier"] as? String } == ["order-42"])
        #expect(try CLI.run(["items", "--store", store, "--user", "alice", "--json"]).objects().map { $0["uniqueIdentifier"] as? String } == ["order-1"])
        #expect(try CLI.run(["items", "--store", store, "--user", "bob", "--json"]).objects().isEmpty)
        #expect(try CLI.run(["client-state", "--store", store, "--user", "alice", "--index", "idx", "--json"]).object()["clientState"] as? String == "QQ==")
        #expect(try CLI.run(["current", "--store", store, "--user", "bob", "--json"]).objects().map { $0["title"] as? String } == ["Bob's coffee"])
        let users = try CLI.run(["users", "--store", store, "--json"]).objects()
        #expect(users.map { $0["user"] as? String } == ["alice", "bob"])
        #expect(users[0]["activities"] as? Int == 1 && users[0]["saved"] as? Int == 1 && users[0]["items"] as? Int == 1)
        #expect(users[0]["documents"] as? Int == 2)
        #expect(users[1]["items"] as? Int == 0 && users[1]["documents"] as? Int == 1)
        let suggestions = try CLI.run(["suggestions", "--store", store, "--user", "alice", "--json"] + now).objects()
        #expect(suggestions.map { $0["key"] as? String } == ["order-42"])
        #expect(Set(suggestions[0].keys) == ["key", "activity", "activityType", "title", "score"])
        #expect(try CLI.run(["suggestions", "--store", store, "--user", "bob", "--json"] + now).objects().isEmpty,
                "bob's copy is not eligible for prediction")
        // log --user: that user's events only.
        let bobLog = try CLI.run(["log", "--store", store, "--user", "bob", "--json"]).stdout.split(separator: "\n")
            .map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(bobLog.map { $0["type"] as? String } == ["activity.created", "activity.becameCurrent", "activity.saved",
                                                          "searchableItems.indexed", "searchableItems.allDeleted"])
        // apply --user: the space of lines that name none.
        let more = try CLI.run(["apply", "--store", store, "--user", "carol", "-"],
                               input: #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"x","attributeSet":{"title":"coffee"}}]}"# + "\n")
        #expect(more.status == 0, "\(more.stderr)")
        #expect(try CLI.run(["items", "--store", store, "--user", "carol", "--json"]).objects().count == 1)
    }

    @Test("a user name that is not allowed, and a user on a store-wide operation, are clear errors that write nothing")
    func badUsers() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        let long = String(repeating: "u", count: 257)
        let run = try CLI.run(["apply", "--store", store, "-"], input: [
            #"{"op":"indexSearchableItems","user":"\#(long)","items":[{"uniqueIdentifier":"x"}]}"#,
            #"{"op":"declareActivityTypes","user":"alice","types":["com.example.app.viewOrder"]}"#,
            #"{"op":"deleteAllSearchableItems","user":7}"#,
        ].joined(separator: "\n") + "\n")
        #expect(run.status != 0)
        #expect(run.stderr.contains("line 1") && run.stderr.contains("user") && run.stderr.contains("256"), "\(run.stderr)")
        #expect(run.stderr.contains("line 2") && run.stderr.contains("shared by every user space"), "\(run.stderr)")
        #expect(run.stderr.contains("line 3") && run.stderr.contains("user"), "\(run.stderr)")
        #expect(try CLI.run(["users", "--store", store, "--json"]).objects().isEmpty)
        #expect(try CLI.run(["log", "--store", store, "--json"]).stdout.isEmpty)
    }
}
