import ActivityDomain
import ArgumentParser
import EventLog
import Foundation
import TextIndex

struct DemoCommand: Subcommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Apply a bundled coffee-shop sample to a fresh store, print its views, search, verify, snapshot, replay.",
        discussion: """
            Without --store, the store goes to a new temporary directory, which is kept (its path is
            printed) so that the other subcommands can be tried on it. With --store, the directory
            must not hold a store yet.

            Examples:
              eventlog demo
              eventlog demo --store /tmp/coffee && eventlog current --store /tmp/coffee --json
            """
    )

    @Option(name: .long, help: ArgumentHelp("A directory for the demo's store; it must not hold a store yet.", valueName: "dir"))
    var store: String?

    func execute() throws {
        let path = try storePath()
        let store = try StoreLocation.open(path, create: true)
        let now = ISO8601Time.date(from: DemoSample.now)!

        section("Applying \(DemoSample.lines.count) operations to a new store at \(path)")
        let applier = OperationApplier(store: store, transactionSize: 500) { rejection in
            Output.error("line \(rejection.line): \(rejection.message)")
        }
        for (index, line) in DemoSample.lines.enumerated() {
            try applier.add(lineNumber: index + 1, bytes: Array(line.utf8))
        }
        try applier.finish()
        try StoreLocation.waitUntilSearchable(store)
        let summary = applier.summary
        Output.line("applied \(summary.applied), rejected \(summary.rejected), dropped updates \(summary.droppedUpdates); "
            + "\(summary.events) events, head at \(try store.head())")
        guard summary.rejected == 0 else { throw CLIError("the bundled sample was rejected in part") }

        section("User spaces (eventlog users)")
        Output.table(["USER", "ACTIVITIES", "SAVED", "ITEMS", "DOCUMENTS"], try store.users().map {
            [$0.user.isEmpty ? "\"\" (default: the café's menu)" : $0.user, "\($0.activities)", "\($0.saved)", "\($0.items)", "\($0.documents)"]
        })

        for user in ["alice", "bob", "hanako"] {
            let space = store.user(user)
            section("\(user): current activity of each device (eventlog current --user \(user))")
            Output.table(["DEVICE", "ACTIVITY", "TITLE"], try space.currentActivities().map {
                [$0.device, $0.activity.activity, $0.activity.title ?? ""]
            })
            section("\(user): saved for search and prediction (eventlog saved --user \(user))")
            Output.table(["KEY", "ACTIVITY", "TITLE", "USERINFO"], try space.savedActivities().map {
                [$0.key, $0.activity.activity, $0.activity.title ?? "", UserInfoValue.jsonObject($0.activity.userInfo).serialized()]
            })
        }

        let alice = store.user("alice")
        section("Handoff for alice on her iPad at \(DemoSample.now) (eventlog handoff --user alice --device alice-iPad)")
        Output.table(["FROM DEVICE", "ACTIVITY", "TITLE"], try alice.handoffCandidates(device: "alice-iPad", now: now).map {
            [$0.device, $0.activity.activity, $0.activity.title ?? ""]
        })

        section("Suggestions for bob (eventlog suggestions --user bob)")
        Output.table(["KEY", "ACTIVITY", "SCORE"], try store.user("bob").suggestions(now: now).map {
            [$0.key, $0.activity.activity, String(format: "%.4f", $0.score)]
        })

        section("Resolving alice's and hanako's links (eventlog resolve --user U)")
        for (user, identifier) in [("alice", "order-42"), ("alice", "https://coffee.example.com/orders/42"), ("hanako", "order-9"),
                                   ("bob", "order-42")] {
            Output.line("\(user) \(identifier): " + describe(try store.user(user).resolve(identifier)))
        }

        section("The café's searchable items, in the default space (eventlog items)")
        Output.table(["IDENTIFIER", "DOMAIN", "TITLE"], try store.items().map {
            [$0.uniqueIdentifier, $0.item.domainIdentifier ?? "", $0.item.attributeSet.title ?? ""]
        })
        Output.line("client state of menu-indexer: "
            + (try store.fetchLastClientState(index: "menu-indexer").map { String(decoding: $0, as: UTF8.self) } ?? "none"))

        for text in ["latte", "coffee", "抹茶", "chai", "desayuno", "咖啡", "cafe"] {
            section("search \"\(text)\" in the default space (eventlog search \(text))")
            try printHits(try store.search(text, now: now, limit: 5), json: false)
        }
        for user in ["alice", "bob"] {
            section("search \"coffee\" as \(user): \(user)'s saved activities only (eventlog search coffee --user \(user))")
            try printHits(try store.user(user).search("coffee", now: now, limit: 5), json: false)
        }
        let expression = #"kind == "item" && (keywords == "coffee"c || domainIdentifier == "orders.*")"#
        section("query \(expression) (eventlog query)")
        try printHits(try store.query(expression, now: now), json: false)

        section("The last five events of the log (eventlog log --from \(max(1, try store.head() - 4)))")
        try store.eventStore.forEachEvent(from: max(1, try store.head() - 4)) { event in
            Output.line("\(event.position)  \(Output.time(event.appendedAt))  \(event.type)")
            return true
        }

        section("Verifying the log (eventlog verify)")
        let report = try store.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        if let problem = report.firstProblem { throw CLIError("verify: \(problem)") }
        Output.line("ok: \(report.recordsChecked) records, \(report.bytesChecked) bytes, hash chain intact")

        section("Snapshot, then rebuild and compare with the live views (eventlog snapshot create; eventlog replay --verify)")
        let snapshot = try store.eventStore.createSnapshot()
        Output.line("snapshot at position \(snapshot.position), \(snapshot.bytes) bytes")
        let comparison = try store.eventStore.verifyViews()
        if let difference = comparison.difference { throw CLIError("replay --verify: \(difference)") }
        Output.line("equal: the views rebuilt \(replaySummary(comparison.report)) match the live ones")

        section("Try it")
        Output.line("eventlog users --store \(path)")
        Output.line("eventlog current --store \(path) --user alice --json")
        Output.line("eventlog log --store \(path) --json")
        Output.line("eventlog stats --store \(path)")
    }

    private func storePath() throws -> String {
        guard let store else {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("eventlog-demo-\(UUID().uuidString.prefix(8))")
            return dir.path
        }
        let dataFile = (store as NSString).appendingPathComponent("data.mdb")
        if FileManager.default.fileExists(atPath: dataFile) {
            throw CLIError("--store \(store) already holds a store; the demo needs a fresh directory")
        }
        return store
    }

    private func section(_ title: String) {
        Output.line("\n== \(title)")
    }

    private func describe(_ resolution: SavedActivityResolution) -> String {
        switch resolution {
        case .saved(let saved): "saved under \(saved.key) (\(saved.activity.title ?? saved.activity.activity))"
        case .removed(let removal): "removed by \(removal.operation) at position \(removal.position), \(Output.time(removal.removedAt))"
        case .unknown: "unknown"
        }
    }
}
