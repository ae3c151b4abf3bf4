import Foundation
import Testing

/// Stores and operations the command-line tests start from. Also compiled
/// into Tools/Tests/EventLogCLIProcessTests (a symbolic link to this file),
/// whose tests run another process (`SyntheticAppender`) beside `eventlog`.
enum Stores {
    /// A store with `Sample.good` applied; removed by the caller.
    static func sample() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        let run = try CLI.run(["apply", "--store", dir.sub("store"), try dir.file("good.jsonl", Sample.good)])
        #expect(run.status == 0, "\(run.stderr)")
        return dir
    }

    /// Every command that only reads, with arguments that find something in `Sample.good`.
    static func readCommands(_ store: String) -> [[String]] {
        [
            ["items", "--json"], ["items", "--domain", "orders", "--json"],
            ["search", "latte", "--now", Sample.now, "--json"],
            ["query", #"title == "Oat*""#, "--now", Sample.now, "--json"],
            ["log", "--json"], ["current", "--json"], ["saved", "--json"], ["stats", "--json"], ["verify", "--json"],
            ["client-state", "--json"], ["resolve", "order-42", "--json"],
            ["handoff", "--user", "u1", "--device", "tablet", "--now", Sample.now, "--json"],
            ["users", "--json"], ["suggestions", "--user", "u1", "--now", Sample.now, "--json"],
            ["snapshot", "list", "--json"],
        ].map { $0 + ["--store", store] }
    }

    /// Operations of several users, interleaved round by round so that their
    /// data shares LMDB pages; `marked` gets `CompactionTests.markers`, the others plain
    /// words. Every line has its own `at`.
    ///
    /// `longTexts`: item descriptions of 2.2 to 2.6 KB, values that LMDB
    /// stores on an overflow page of their own, whose tail beyond the value
    /// is whatever the page buffer held before.
    static func operations(users: [String], marked: String, rounds: Int, itemsPerRound: Int = 2, longTexts: Bool = false) -> [String] {
        var lines = [#"{"op":"declareActivityTypes","types":["com.example.app.viewOrder"],"at":"2026-11-22T10:00:00Z"}"#]
        var second = 0
        func at() -> String {
            second += 1
            return String(format: "2026-11-%02d", 23 + second / 86_400) + "T"
                + String(format: "%02d:%02d:%02dZ", second / 3600 % 24, second / 60 % 60, second % 60)
        }
        func json(_ object: [String: Any]) -> String {
            var object = object
            object["at"] = at()
            let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            return String(decoding: data, as: UTF8.self)
        }
        func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        for round in 0..<rounds {
            for user in users {
                let m = user == marked ? "QZX" : user
                let activity = "\(m)ACT\(round)"
                lines.append(json(["op": "createActivity", "user": user, "activity": activity, "activityType": "com.example.app.viewOrder",
                                   "device": round % 2 == 0 ? "phone" : "laptop", "title": "Latte \(m)TITLE\(round)",
                                   "keywords": ["coffee", "\(m)KEYWORD\(round)"],
                                   "userInfo": ["note": "\(m)INFO\(round)", "blob": ["$data": base64("\(m)DATA\(round)")]],
                                   "eligibleForSearch": true, "eligibleForPrediction": true, "eligibleForHandoff": true,
                                   "persistentIdentifier": "\(m)PID\(round)"]))
                lines.append(json(["op": "updateActivity", "user": user, "activity": activity, "title": "Oat latte \(m)UPDATED\(round)",
                                   "keywords": ["coffee", "oat", "\(m)KEYWORD\(round)"]]))
                lines.append(json(["op": "addUserInfoEntries", "user": user, "activity": activity, "entries": ["size": "\(m)ENTRY\(round)"]]))
                lines.append(json(["op": "becomeCurrent", "user": user, "activity": activity]))
                lines.append(json(["op": "beginIndexBatch", "user": user, "index": "\(m)INDEX"]))
                let items: [[String: Any]] = (0..<itemsPerRound).map { i in
                    ["uniqueIdentifier": "\(m)ITEM\(round)-\(i)", "domainIdentifier": "\(m)DOMAIN\(round % 3)",
                     "attributeSet": ["title": "Coffee beans \(m)ITEMTITLE\(round)", "keywords": ["coffee", "\(m)ITEMKW\(round)"],
                                      "contentDescription": "Roasted \(m)DESC\(round) " + String(repeating: "arabica ", count: longTexts ? 280 + 40 * i : 20 + i)]]
                }
                lines.append(json(["op": "indexSearchableItems", "user": user, "items": items]))
                lines.append(json(["op": "endIndexBatch", "user": user, "index": "\(m)INDEX", "clientState": base64("\(m)STATE\(round)")]))
                if round % 4 == 3 {
                    lines.append(json(["op": "deleteSearchableItems", "user": user, "identifiers": ["\(m)ITEM\(round - 1)-0"]]))
                    lines.append(json(["op": "deleteSavedUserActivities", "user": user, "persistentIdentifiers": ["\(m)PID\(round - 2)"]]))
                }
                if round % 5 == 4 { lines.append(json(["op": "invalidate", "user": user, "activity": "\(m)ACT\(round - 1)"])) }
            }
        }
        return lines
    }

    /// A store with freed pages to drop: three users, alice forgotten, a snapshot.
    static func compactable(_ store: String, _ dir: TemporaryDirectory, rounds: Int) throws {
        let lines = operations(users: ["alice", "bob", "carol"], marked: "alice", rounds: rounds)
        let apply = try CLI.run(["apply", "--store", store, try dir.file("ops-\(rounds).jsonl", lines)])
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(try CLI.run(["snapshot", "create", "--store", store]).status == 0)
        let forget = try CLI.run(["apply", "--store", store, "-"], input: #"{"op":"forgetUser","user":"alice","at":"2026-12-01T00:00:00Z"}"# + "\n")
        #expect(forget.status == 0, "\(forget.stderr)")
    }
}
