import Foundation
import Testing

/// SPEC §2, "Damaged files are errors, never crashes", through `eventlog`:
/// every command on a damaged, cut-short or foreign store, or one it may
/// not read, on a full disk, or under a writer whose lock file was deleted,
/// exits with a clear error (or, where the damage is in no page in use,
/// the right answer) within a bound: never a signal, never a hang.
@Suite("Damaged files and operator mistakes")
struct DamagedFileTests {
    static let pageSize = 4096

    /// A store of `Sample.good` and `items` items over three users.
    /// `count` words that differ from item to item (numbers of a
    /// multiplicative sequence): text the log's zstd does not shrink much,
    /// so that a store's size follows its items'.
    static func words(_ n: Int, count: Int) -> String {
        var state = UInt64(n) &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return "w" + String(state >> 40, radix: 36)
        }.joined(separator: " ")
    }

    static func store(items: Int) throws -> (dir: TemporaryDirectory, store: String) {
        let dir = TemporaryDirectory()
        let lines = Sample.good + (0..<items).map { n in
            #"{"op":"indexSearchableItems","user":"u\#(n % 3)","items":[{"uniqueIdentifier":"item-\#(n)","attributeSet":{"title":"Title \#(n) of a few words","contentDescription":"\#(Self.words(n, count: 40))"}}],"at":"2026-11-22T10:01:00Z"}"#
        }
        let run = try CLI.run(["apply", "--store", dir.sub("store"), try dir.file("store.jsonl", lines)])
        #expect(run.status == 0, "\(run.stderr)")
        return (dir, dir.sub("store"))
    }

    /// What every damaged store is read with: the audit and reads of the views and the log.
    static func reads(_ store: String) -> [[String]] {
        [
            ["verify", "--store", store],
            ["items", "--store", store, "--user", "u1", "--json"],
            ["log", "--store", store, "--json"],
        ]
    }

    /// Every command a damaged store is met with: the reads, a rebuild's check and a write.
    static func commands(_ store: String, write: String) -> [[String]] {
        reads(store) + [["replay", "--verify", "--store", store], ["apply", "--store", store, write]]
    }

    /// Runs `command` on `store` and expects an error (status 1, a message)
    /// or, with status 0, `clean`'s output: never a signal or a hang.
    static func expectErrorOrCorrect(_ command: [String], clean: String?, _ what: String,
                                     sourceLocation: SourceLocation = #_sourceLocation) throws -> BoundedRun {
        let run = try CLI.runBounded(command, timeout: 60)
        #expect(run.exited, "\(what): \(command.joined(separator: " ")): \(run)", sourceLocation: sourceLocation)
        if run.exited {
            #expect(run.status == 0 || (run.status == 1 && !run.stderr.isEmpty), "\(what): \(command[0]): \(run)",
                    sourceLocation: sourceLocation)
        }
        if run.status == 0, let clean {
            #expect(run.stdout == clean, "\(what): \(command[0]) answered wrongly with status 0", sourceLocation: sourceLocation)
        }
        return run
    }

    @Test("a data.mdb cut short is a clear error at open, naming the file and both sizes; verify too")
    func cutShort() throws {
        let (dir, store) = try Self.store(items: 400)
        defer { dir.remove() }
        let size = try FileManager.default.attributesOfItem(atPath: store + "/data.mdb")[.size] as! Int
        #expect(size > 65 * Self.pageSize, "the store needs more than 65 pages: \(size) bytes")
        #expect(truncate(store + "/data.mdb", 131_072) == 0)
        let write = try dir.file("write.jsonl", [#"{"op":"deleteAllSearchableItems"}"#])
        for command in Self.commands(store, write: write) + [["replay", "--store", store], ["compact", "--store", store]] {
            let run = try CLI.runBounded(command)
            #expect(run.exited && run.status == 1, "\(command[0]): \(run)")
            #expect(run.stderr.contains("store file cut short") && run.stderr.contains(store + "/data.mdb")
                    && run.stderr.contains("131072 bytes") && run.stderr.contains("\(size) bytes"), "\(command[0]): \(run.stderr)")
        }
    }

    @Test("cut at every page boundary, every command exits with an error or the right answer, never a signal or a hang")
    func truncatedAtEveryPage() throws {
        let (dir, store) = try Self.store(items: 10)
        defer { dir.remove() }
        let write = try dir.file("write.jsonl", [#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"new"}]}"#])
        let pages = (try FileManager.default.attributesOfItem(atPath: store + "/data.mdb")[.size] as! Int) / Self.pageSize
        let clean = try CLI.run(["items", "--store", store, "--user", "u1", "--json"]).stdout
        var errors = 0
        for page in 0..<pages {
            let copy = dir.sub("cut-\(page)")
            try FileManager.default.copyItem(atPath: store, toPath: copy)
            defer { try? FileManager.default.removeItem(atPath: copy) }
            #expect(truncate(copy + "/data.mdb", off_t(page * Self.pageSize)) == 0)
            let read = try Self.expectErrorOrCorrect(["items", "--store", copy, "--user", "u1", "--json"], clean: clean, "cut at page \(page)")
            _ = try Self.expectErrorOrCorrect(["apply", "--store", copy, write], clean: nil, "cut at page \(page)")
            if read.status != 0 { errors += 1 }
        }
        // Cut anywhere before its last page, a store has lost pages in use.
        #expect(errors == pages, "\(errors) of \(pages) cuts were errors")
    }

    /// Flips page `page` of `file`: every byte inverted, or (`bytes`) 8 bytes at seeded places set to seeded values.
    static func damage(_ file: String, page: Int, bytes: Bool) throws {
        let fd = open(file, O_RDWR)
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: pageSize)
        _ = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, pageSize, off_t(page * pageSize)) }
        if bytes {
            var rng = SeededGenerator(seed: UInt64(page))
            for _ in 0..<8 { buffer[Int.random(in: 0..<pageSize, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
        } else {
            for i in buffer.indices { buffer[i] = ~buffer[i] }
        }
        _ = buffer.withUnsafeBytes { pwrite(fd, $0.baseAddress, pageSize, off_t(page * pageSize)) }
    }

    @Test("every page of a small store damaged in turn: every command exits with an error or the right answer, never a signal or a hang",
          arguments: [false, true])
    func damagedPageSweep(randomBytes: Bool) throws {
        let (dir, store) = try Self.store(items: 6)
        defer { dir.remove() }
        let write = try dir.file("write.jsonl", [#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"new"}]}"#])
        let pages = (try FileManager.default.attributesOfItem(atPath: store + "/data.mdb")[.size] as! Int) / Self.pageSize
        let clean = try Self.reads(store).map { try CLI.run($0).stdout.replacingOccurrences(of: store, with: "STORE") }
        var errors = 0
        for page in 0..<pages {
            let copy = dir.sub("damaged-\(page)")
            try FileManager.default.copyItem(atPath: store, toPath: copy)
            defer { try? FileManager.default.removeItem(atPath: copy) }
            try Self.damage(copy + "/data.mdb", page: page, bytes: randomBytes)
            var differed = false, detected = false
            for (index, command) in Self.commands(copy, write: write).enumerated() {
                // 8 random bytes can land in a view's value, which only the rebuild's check sees: see below.
                let run = try Self.expectErrorOrCorrect(command, clean: nil, "page \(page)")
                switch command[0] {
                case "apply": break
                case "replay": if run.status != 0 { detected = true }
                default:
                    if run.status != 0 { detected = true }
                    if run.status == 0 && run.stdout.replacingOccurrences(of: copy, with: "STORE") != clean[index] { differed = true }
                }
                // Found at open: the rest would only say it again.
                if run.stderr.contains("store file damaged") || run.stderr.contains("not an LMDB data file") { break }
            }
            if detected { errors += 1 }
            // A wrong answer with status 0 only where the audit or the rebuild's check finds the damage;
            // inverted, a page in use is found at once, and a free page changes no answer.
            #expect(!differed || detected, "page \(page): a read answered wrongly and nothing found the damage")
            #expect(!differed || randomBytes, "page \(page): inverted, yet a read answered wrongly")
        }
        if !randomBytes {
            // Inverted, every page in use is found; only free pages go unnoticed.
            #expect(errors >= pages * 3 / 4, "\(errors) of \(pages) damaged pages were found")
        }
    }

    @Test("a log key damaged before open: verify, replay, replay --full, replay --verify and replay --to P --into D name position 63, at once")
    func damagedLogKey() throws {
        let (dir, store) = try Self.store(items: 80)
        defer { dir.remove() }
        #expect(try DataFileDamage.replaceLogKey(in: store + "/data.mdb", position: 63, with: 65_087) > 0)
        for command in [["verify"], ["replay"], ["replay", "--full"], ["replay", "--verify"], ["replay", "--to", "70", "--into", dir.sub("travel")]] {
            let run = try CLI.runBounded(command + ["--store", store], timeout: 60)
            #expect(run.exited && run.status == 1, "\(command): \(run)")
            #expect(run.stderr.contains("the log is damaged at position 63"), "\(command): \(run.stderr)")
            #expect(!run.stderr.contains("MDB_KEYEXIST"), "\(command): \(run.stderr)")
        }
    }

    @Test("lock.mdb deleted under a running writer: the writer refuses its next write, another writer waits for it, nothing acknowledged is lost")
    func deletedLockFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("first.jsonl", [Sample.good[0]])]).status == 0)
        let slow = try SlowWriter(store: store, in: dir)
        func send(_ n: Int) { slow.send(#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"slow-\#(n)"}]}"#) }
        func items() throws -> [String] {
            try CLI.run(["items", "--store", store, "--json"]).objects().compactMap { $0["uniqueIdentifier"] as? String }
        }
        for n in 0..<5 { send(n) }
        // Acknowledged: committed, as a reader sees.
        let deadline = Date().addingTimeInterval(60)
        while try items().count < 5 && Date() < deadline { usleep(50_000) }
        #expect(try items().count == 5)
        try FileManager.default.removeItem(atPath: store + "/lock.mdb")
        // A second writer, with a new lock.mdb.
        let other = try CLI.run(["apply", "--store", store, try dir.file("other.jsonl", (0..<5).map {
            #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"other-\#($0)"}]}"#
        })])
        #expect(other.status == 0, "\(other.stderr)")
        // The slow writer's next line: refused, with a message that says why.
        send(5)
        let (slowStatus, slowErrors) = slow.finish()
        #expect(slowStatus == 1, "\(slowErrors)")
        #expect(slowErrors.contains("lock.mdb was removed") || slowErrors.contains("lock.mdb was replaced"), "\(slowErrors)")
        // Everything acknowledged is there; the log verifies; the views equal a rebuild.
        let all = Set(try items())
        #expect(all.isSuperset(of: (0..<5).map { "slow-\($0)" } + (0..<5).map { "other-\($0)" }), "\(all.sorted())")
        #expect(!all.contains("slow-5"))
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
        let replay = try CLI.run(["replay", "--verify", "--store", store, "--json"])
        #expect(try replay.object()["equal"] as? Bool == true, "\(replay.stdout) \(replay.stderr)")
    }

    @Test("another program's LMDB environment: apply, forget, snapshot create and compact refuse it and write nothing; reads refuse it too")
    func foreignEnvironment() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let foreign = dir.sub("foreign")
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        // Python's lmdb, as another program would write it.
        let python = try CLI.spawnAndWait("/usr/bin/python3", arguments: ["-c", """
            import lmdb
            env = lmdb.open('\(foreign)', max_dbs=4)
            db = env.open_db(b'their-data')
            with env.begin(write=True) as txn:
                txn.put(b'k', b'theirs', db=db)
            """], environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil)
        #expect(python == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: foreign + "/data.mdb"))
        let ops = try dir.file("ops.jsonl", Sample.good)
        for command in [["apply", "--store", foreign, ops], ["forget", "--store", foreign, "--user", "alice"],
                        ["snapshot", "create", "--store", foreign], ["compact", "--store", foreign], ["items", "--store", foreign],
                        ["verify", "--store", foreign]] {
            let run = try CLI.runBounded(command)
            #expect(run.exited && run.status != 0, "\(command): \(run)")
            #expect(run.stderr.contains("without an event log"), "\(command): \(run.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: foreign + "/data.mdb")) == before)
    }

    @Test("a store this user may not read is permission denied, never no store",
          .enabled(if: getuid() == 0, "needs root to run the commands as nobody"))
    func permissionDenied() throws {
        let (dir, store) = try Self.store(items: 1)
        defer {
            chmod(store, 0o755)
            dir.remove()
        }
        #expect(chmod(dir.path, 0o755) == 0 && chmod(store, 0o000) == 0)
        let nobody = ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        for command in [["items", "--json"], ["verify"], ["apply", "-"], ["log"]] {
            let run = try CLI.run(command + ["--store", store], through: nobody)
            #expect(run.status == 1, "\(command): \(run.stderr)")
            #expect(run.stderr.contains("permission denied") && !run.stderr.contains("no store"), "\(command): \(run.stderr)")
        }
    }

    @Test("a full disk: apply says the disk holding the store is full; replay --verify fails cleanly and leaves no scratch files",
          .enabled(if: getuid() == 0, "needs root to mount a small filesystem"))
    func fullDisk() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let mount = dir.sub("small")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let store = mount + "/store"
        let big = (0..<1000).map { n in
            #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"big-\#(n)","attributeSet":{"title":"\#(Self.words(n, count: 300))"}}],"at":"2026-11-22T10:01:00Z"}"#
        }
        let good = try dir.file("good.jsonl", Sample.good)
        let fill = try dir.file("fill.jsonl", big)
        // One shell in a mount namespace of its own, on a 2 MiB tmpfs: the store, then a write that fills it, then a rebuild's check.
        let script = """
            mount -t tmpfs -o size=1m tmpfs "$1" || exit 99
            "$2" apply --store "$1/store" "$3" >/dev/null || exit 98
            "$2" apply --store "$1/store" --transaction-size 1000 "$4" 2> "$5/apply.err"; echo "apply $?" > "$5/status"
            "$2" replay --verify --store "$1/store" 2> "$5/replay.err"; echo "replay $?" >> "$5/status"
            ls "$1/store" > "$5/listing"
            "$2" verify --store "$1/store" > /dev/null 2> "$5/verify.err"; echo "verify $?" >> "$5/status"
            """
        let status = try CLI.spawnAndWait("/usr/bin/unshare", arguments: ["-m", "sh", "-c", script, "sh", mount, CLI.executable.path, good, fill, dir.path],
                                          environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil)
        #expect(status == 0)
        let statuses = (try? String(contentsOfFile: dir.sub("status"), encoding: .utf8)) ?? ""
        #expect(statuses == "apply 1\nreplay 1\nverify 0\n", "\(statuses)")
        let applyErrors = (try? String(contentsOfFile: dir.sub("apply.err"), encoding: .utf8)) ?? ""
        #expect(applyErrors.contains("the disk holding") && applyErrors.contains("is full") && applyErrors.contains(store), "\(applyErrors)")
        let replayErrors = (try? String(contentsOfFile: dir.sub("replay.err"), encoding: .utf8)) ?? ""
        #expect(replayErrors.contains("is full"), "\(replayErrors)")
        let listing = (try? String(contentsOfFile: dir.sub("listing"), encoding: .utf8)) ?? ""
        #expect(!listing.contains("replay-scratch"), "\(listing)")
    }
}
