import Foundation
import Testing

/// `eventlog ship`, `follow` and `restore` against a real PostgreSQL server
/// (Scripts/with-postgres.sh). Serialized: one test crashes the server.
@Suite("Shipping to PostgreSQL", .serialized, .enabled(if: Postgres.enabled))
struct ShippingTests {
    private func apply(_ store: String, _ lines: [String], in dir: TemporaryDirectory) throws {
        let file = try dir.file("ops-\(UUID().uuidString).jsonl", lines)
        let result = try CLI.run(["apply", "--store", store, file])
        #expect(result.status == 0, "apply: \(result.stderr)")
    }

    private func run(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let result = try CLI.run(arguments + ["--json"])
        #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stderr)", sourceLocation: sourceLocation)
        return (try? result.object()) ?? [:]
    }

    @Test("ship, follow and restore a store of several users: same last link, same views, replay --verify holds")
    func shipFollowRestore() throws {
        let url = try Postgres.requireURL()
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let stream = Postgres.stream("basic")
        let leader = dir.sub("leader"), follower = dir.sub("follower")
        let first = [ShippingSample.declare()] + ShippingSample.operations(0..<60)
        try apply(leader, first, in: dir)
        let firstHead = try StoreView(leader).head

        var shipped = try run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once", "--batch", "17"])
        #expect(shipped["streamHead"] as? Int == firstHead)
        #expect(shipped["epoch"] as? Int == 1)
        var followed = try run(["follow", "--store", follower, "--from", url, "--stream", stream, "--once"])
        #expect(followed["storeHead"] as? Int == firstHead)
        #expect(try StoreView(follower) == StoreView(leader))

        // More operations: shipping and following continue where they stood.
        try apply(leader, ShippingSample.operations(60..<150), in: dir)
        shipped = try run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once"])
        let leaderView = try StoreView(leader)
        #expect(shipped["streamHead"] as? Int == leaderView.head)
        #expect(shipped["records"] as? Int == leaderView.head - firstHead)
        followed = try run(["follow", "--store", follower, "--from", url, "--stream", stream, "--once"])
        #expect(followed["records"] as? Int == leaderView.head - firstHead)
        #expect(try StoreView(follower) == leaderView)
        try expectViewsVerify(follower)
        let stats = try run(["stats", "--store", follower])
        let follow = try #require(stats["follow"] as? [String: Any])
        #expect(follow["stream"] as? String == stream)
        #expect(follow["lag"] as? Int == 0)
        #expect(follow["streamHead"] as? Int == leaderView.head)
        #expect((try run(["stats", "--store", leader])["ships"] as? [[String: Any]])?.first?["epoch"] as? Int == 1)

        // A restore from PostgreSQL alone.
        let restored = dir.sub("restored")
        let restore = try run(["restore", "--from", url, "--stream", stream, "--into", restored])
        #expect(restore["link"] as? String == leaderView.lastLink)
        #expect(try StoreView(restored) == leaderView)
        try expectViewsVerify(restored)

        // restore --to P equals a store that saw only the operations up to P.
        let partial = dir.sub("partial"), only = dir.sub("only-first")
        _ = try run(["restore", "--from", url, "--stream", stream, "--into", partial, "--to", "\(firstHead)"])
        try apply(only, first, in: dir)
        #expect(try StoreView(partial) == StoreView(only))
        try expectViewsVerify(partial)

        // Bad input writes nothing and says what is allowed.
        let past = try CLI.run(["restore", "--from", url, "--stream", stream, "--into", dir.sub("past"), "--to", "\(leaderView.head + 1)"])
        #expect(past.status != 0)
        #expect(past.stderr.contains("past stream \(stream)'s head \(leaderView.head)"), "\(past.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("past/data.mdb")))
        let badURL = try CLI.run(["ship", "--store", leader, "--to", "mysql://x@y/z", "--stream", stream, "--once"])
        #expect(badURL.status != 0 && badURL.stderr.contains("not postgres or postgresql"), "\(badURL.stderr)")
        let badName = try CLI.run(["ship", "--store", leader, "--to", url, "--stream", "no spaces", "--once"])
        #expect(badName.status != 0 && badName.stderr.contains("stream name \"no spaces\" is not allowed"), "\(badName.stderr)")
        let missing = try CLI.run(["follow", "--store", dir.sub("f2"), "--from", url, "--stream", "never-shipped", "--once"])
        #expect(missing.status != 0 && missing.stderr.contains("there is no stream never-shipped"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("f2/data.mdb")), "a failed follow leaves no store")
    }

    @Test("a forked history and a follower ahead of the stream are refused, naming the position; --resync recovers")
    func forks() throws {
        let url = try Postgres.requireURL()
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let stream = Postgres.stream("fork")
        let leader = dir.sub("leader")
        try apply(leader, [ShippingSample.declare()] + ShippingSample.operations(0..<30), in: dir)
        _ = try run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once"])
        let head = try StoreView(leader).head

        // Another store with other operations: its history differs.
        let other = dir.sub("other")
        try apply(other, [ShippingSample.declare()] + ShippingSample.operations(96..<108), in: dir)
        let fork = try CLI.run(["follow", "--store", other, "--from", url, "--stream", stream, "--once"])
        #expect(fork.status != 0)
        #expect(fork.stderr.contains("a fork") && fork.stderr.contains("(position "), "\(fork.stderr)")
        let shipOther = try CLI.run(["ship", "--store", other, "--to", url, "--stream", stream, "--once"])
        #expect(shipOther.status != 0 && shipOther.stderr.contains("never shipped to it"), "\(shipOther.stderr)")

        // A follower that wrote on its own is ahead of the stream.
        let follower = dir.sub("follower")
        _ = try run(["follow", "--store", follower, "--from", url, "--stream", stream, "--once"])
        try apply(follower, ShippingSample.operations(198..<201), in: dir)
        let ahead = try CLI.run(["follow", "--store", follower, "--from", url, "--stream", stream, "--once"])
        #expect(ahead.status != 0)
        #expect(ahead.stderr.contains("ahead of stream \(stream)'s head \(head)") && ahead.stderr.contains("(position \(head + 1))"),
                "\(ahead.stderr)")
        // --resync rebuilds it from the stream.
        _ = try run(["follow", "--store", follower, "--from", url, "--stream", stream, "--once", "--resync"])
        #expect(try StoreView(follower) == StoreView(leader))

        // A leader whose log was rewritten (a copy from before, written on
        // differently) is refused at the first differing position it meets.
        let rewound = dir.sub("rewound")
        try FileManager.default.copyItem(atPath: leader, toPath: rewound)
        try apply(leader, ShippingSample.operations(30..<40), in: dir)
        _ = try run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once"])
        let shippedHead = try StoreView(leader).head
        try apply(rewound, ShippingSample.operations(300..<330), in: dir)
        let rewritten = try CLI.run(["ship", "--store", rewound, "--to", url, "--stream", stream, "--once"])
        #expect(rewritten.status != 0)
        #expect(rewritten.stderr.contains("a different history") && rewritten.stderr.contains("(position \(shippedHead))"),
                "\(rewritten.stderr)")
        // The stream still holds the leader's history.
        _ = try run(["follow", "--store", follower, "--from", url, "--stream", stream, "--once"])
        #expect(try StoreView(follower) == StoreView(leader))
    }

    @Test("--take-over from a caught-up follower starts a new epoch; the old leader's next batch is refused")
    func fencing() throws {
        let url = try Postgres.requireURL()
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let stream = Postgres.stream("fence")
        let leader = dir.sub("leader"), follower = dir.sub("follower")
        try apply(leader, [ShippingSample.declare()] + ShippingSample.operations(0..<20), in: dir)
        _ = try run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once"])
        _ = try run(["follow", "--store", follower, "--from", url, "--stream", stream, "--once"])

        // A follower ships only by taking over, and only once caught up.
        let plain = try CLI.run(["ship", "--store", follower, "--to", url, "--stream", stream, "--once"])
        #expect(plain.status != 0 && plain.stderr.contains("--take-over"), "\(plain.stderr)")
        try apply(leader, ShippingSample.operations(20..<25), in: dir)
        _ = try run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once"])
        let behind = try CLI.run(["ship", "--store", follower, "--to", url, "--stream", stream, "--once", "--take-over"])
        #expect(behind.status != 0 && behind.stderr.contains("has not caught up"), "\(behind.stderr)")

        _ = try run(["follow", "--store", follower, "--from", url, "--stream", stream, "--once"])
        let takeOver = try run(["ship", "--store", follower, "--to", url, "--stream", stream, "--once", "--take-over"])
        #expect(takeOver["epoch"] as? Int == 2)

        // The old leader writes on and ships: refused, nothing of it stored.
        try apply(leader, ShippingSample.operations(25..<30), in: dir)
        let fenced = try CLI.run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once"])
        #expect(fenced.status != 0)
        #expect(fenced.stderr.contains("another leader took over") && fenced.stderr.contains("epoch 2"), "\(fenced.stderr)")

        // The new leader writes and ships; a new follower gets its history.
        try apply(follower, ShippingSample.operations(42..<54), in: dir)
        let shipped = try run(["ship", "--store", follower, "--to", url, "--stream", stream, "--once"])
        #expect(shipped["epoch"] as? Int == 2)
        let second = dir.sub("second")
        _ = try run(["follow", "--store", second, "--from", url, "--stream", stream, "--once"])
        #expect(try StoreView(second) == StoreView(follower))
        let stats = try run(["stats", "--store", follower])
        #expect(stats["follow"] == nil)
        #expect((stats["ships"] as? [[String: Any]])?.first?["epoch"] as? Int == 2)
    }

    @Test("SIGKILL of the shipper, of the follower and of PostgreSQL at many points: nothing lost, duplicated or out of order")
    func crashes() async throws {
        try await Postgres.exclusive { try crashesAlone() }
    }

    private func crashesAlone() throws {
        let url = try Postgres.requireURL()
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let stream = Postgres.stream("crash")
        let leader = dir.sub("leader"), follower = dir.sub("follower")
        try apply(leader, [ShippingSample.declare()] + ShippingSample.operations(0..<10), in: dir)
        let ship = ["ship", "--store", leader, "--to", url, "--stream", stream, "--batch", "3"]
        let follow = ["follow", "--store", follower, "--from", url, "--stream", stream]
        var shipper = try Background(ship)
        var following = try Background(follow)
        var generator = SystemRandomNumberGenerator()
        var next = 10
        for round in 0..<12 {
            // The leader writes on while both run.
            try apply(leader, ShippingSample.operations(next..<(next + 15)), in: dir)
            next += 15
            usleep(UInt32.random(in: 20_000...300_000, using: &generator))
            switch round % 4 {
            case 0:
                shipper.kill()
                shipper = try Background(ship)
            case 1:
                following.kill()
                following = try Background(follow)
            case 2:
                try Postgres.crashAndRestart()   // both wait it out and go on
            default:
                shipper.kill()
                following.kill()
                try Postgres.crashAndRestart()
                shipper = try Background(ship)
                following = try Background(follow)
            }
        }
        // Both survived PostgreSQL's crashes (they retry) and are still running.
        #expect(shipper.isRunning && following.isRunning)
        let target = try StoreView(leader)
        // Give them the time to catch up, then stop them the hard way.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, (try? StoreView(follower).head) != target.head { usleep(200_000) }
        let shipperLog = shipper.kill(), followerLog = following.kill()
        #expect(try StoreView(follower) == target, "shipper: \(shipperLog)\nfollower: \(followerLog)")
        try expectViewsVerify(follower)
        // PostgreSQL holds exactly the log: a restore checks every position
        // and link from 1 and ends at the leader's last link.
        let restored = dir.sub("restored")
        let restore = try run(["restore", "--from", url, "--stream", stream, "--into", restored])
        #expect(restore["storeHead"] as? Int == target.head)
        #expect(try StoreView(restored) == target)
        // And --once from here finds nothing more to do.
        let again = try run(["ship", "--store", leader, "--to", url, "--stream", stream, "--once"])
        #expect(again["records"] as? Int == 0)
        #expect(again["streamHead"] as? Int == target.head)
    }
}

/// Shipping's bad input, without a server: clear errors, nothing written.
@Suite("Shipping arguments")
struct ShippingArgumentTests {
    @Test("an unreachable server, a bad URL or stream name: an error naming what is wrong, the password never printed, no store left behind")
    func badInput() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let leader = dir.sub("leader")
        #expect(try CLI.run(["apply", "--store", leader, try dir.file("ops.jsonl", [ShippingSample.declare()])]).status == 0)
        // Port 1 on loopback: nothing listens there.
        let unreachable = try CLI.run(["ship", "--store", leader, "--to", "postgres://app:s3cret@127.0.0.1:1/events", "--stream", "s", "--once"])
        #expect(unreachable.status != 0)
        #expect(unreachable.stderr.contains("eventlog ship: connect: cannot connect to postgres://app:***@127.0.0.1:1/events"), "\(unreachable.stderr)")
        #expect(!unreachable.stderr.contains("s3cret"))
        let follow = try CLI.run(["follow", "--store", dir.sub("follower"), "--from", "postgres://app@127.0.0.1:1/events", "--stream", "s", "--once"])
        #expect(follow.status != 0 && follow.stderr.contains("cannot connect"), "\(follow.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("follower/data.mdb")))
        let restore = try CLI.run(["restore", "--from", "postgres://app@127.0.0.1:1/events", "--stream", "s", "--into", dir.sub("restored")])
        #expect(restore.status != 0 && restore.stderr.contains("cannot connect"), "\(restore.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.sub("restored/data.mdb")))
        for (url, why) in [("postgres://127.0.0.1/x", "no user"), ("postgres://u@h/x?sslmode=maybe", "sslmode=maybe is not disable, prefer or require"),
                           ("postgres://u@h/x?color=red", "unknown parameter color")] {
            let result = try CLI.run(["ship", "--store", leader, "--to", url, "--stream", "s", "--once"])
            #expect(result.status != 0 && result.stderr.contains(why) && result.stderr.contains("allowed: postgres://"), "\(url): \(result.stderr)")
        }
        let longName = String(repeating: "x", count: 129)
        let name = try CLI.run(["ship", "--store", leader, "--to", "postgres://u@127.0.0.1:1/x", "--stream", longName, "--once"])
        #expect(name.status != 0 && name.stderr.contains("allowed: 1 to 128 of A-Z a-z 0-9 . _ -"), "\(name.stderr)")
        // The leader's store is as it was: no shipping state recorded.
        let stats = try CLI.run(["stats", "--store", leader, "--json"]).object()
        #expect(stats["ships"] == nil && stats["head"] as? Int == 1)
    }
}
