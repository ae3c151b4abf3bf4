import Foundation
import Testing

/// The index environment (`<store>/index`, derived from the log) met
/// damaged, cut short, foreign, a file, or unreadable: every command exits
/// with a clear error or the right answer, never a signal or a hang; the
/// reads of the log and its views, which do not touch the index, still
/// answer; a writer never writes into a foreign environment; and the
/// remedy the message gives (remove `index/`, `eventlog replay`) rebuilds it.
extension DamagedFileTests {
    static func search(_ store: String) -> [String] { ["search", "--store", store, "--user", "u1", "words", "--json"] }
    static func userItems(_ store: String) -> [String] { ["items", "--store", store, "--user", "u1", "--json"] }

    /// Expects `items` on `store` (a view of the log) to answer as on the clean store.
    static func expectLogReadsAnswer(_ store: String, clean: String, _ what: String,
                                     sourceLocation: SourceLocation = #_sourceLocation) throws {
        let run = try CLI.runBounded(userItems(store), timeout: 60)
        #expect(run.exited && run.status == 0 && run.stdout == clean, "\(what): items: \(run)", sourceLocation: sourceLocation)
    }

    @Test("index/data.mdb cut at every page boundary and every page inverted: the log's reads answer; search, verify, apply and compact say the index is damaged and how to rebuild it")
    func damagedIndexSweep() throws {
        let (dir, store) = try Self.store(items: 10)
        defer { dir.remove() }
        let write = try dir.file("write.jsonl", [#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"new"}]}"#])
        let cleanSearch = try CLI.run(Self.search(store)).stdout
        let cleanItems = try CLI.run(Self.userItems(store)).stdout
        #expect(cleanSearch.contains("item-1") && cleanItems.contains("item-1"))
        let pages = (try FileManager.default.attributesOfItem(atPath: store + "/index/data.mdb")[.size] as! Int) / Self.pageSize
        var found = ["cut": 0, "inverted": 0]
        for kind in ["cut", "inverted"] {
            for page in 0..<pages {
                let what = "index/data.mdb \(kind) at page \(page)"
                let copy = dir.sub("\(kind)-\(page)")
                try FileManager.default.copyItem(atPath: store, toPath: copy)
                defer { try? FileManager.default.removeItem(atPath: copy) }
                if kind == "cut" {
                    #expect(truncate(copy + "/index/data.mdb", off_t(page * Self.pageSize)) == 0)
                } else {
                    try Self.damage(copy + "/index/data.mdb", page: page, bytes: false)
                }
                try Self.expectLogReadsAnswer(copy, clean: cleanItems, what)
                let search = try Self.expectErrorOrCorrect(Self.search(copy), clean: cleanSearch, what)
                _ = try Self.expectErrorOrCorrect(["stats", "--store", copy, "--json"], clean: nil, what)
                let verify = try Self.expectErrorOrCorrect(["verify", "--store", copy], clean: nil, what)
                let apply = try Self.expectErrorOrCorrect(["apply", "--store", copy, write], clean: nil, what)
                let compact = try Self.expectErrorOrCorrect(["compact", "--store", copy], clean: nil, what)
                guard search.status != 0 else { continue }
                found[kind, default: 0] += 1
                for run in [search, apply, compact] {
                    #expect(run.stderr.contains("the store's index is damaged") && run.stderr.contains(copy + "/index/data.mdb")
                            && run.stderr.contains("remove \(copy)/index") && !run.stderr.contains("eventlog restore"), "\(what): \(run.stderr)")
                }
                #expect(verify.status == 1 && verify.stderr.contains("the log is sound, but"), "\(what): verify: \(verify)")
                #expect(apply.status == 1, "\(what): a writer went on beside a damaged index: \(apply)")
            }
        }
        // Cut anywhere before its end, the index has lost pages in use; inverted, only free pages go unnoticed.
        #expect(found["cut"] == pages, "\(found["cut"] ?? 0) of \(pages) cuts were found")
        #expect(found["inverted"]! >= pages * 3 / 4, "\(found["inverted"] ?? 0) of \(pages) inverted pages were found")

        // The remedy the message gives: remove index/, open for writing; the index is the clean one again.
        #expect(truncate(store + "/index/data.mdb", off_t(Self.pageSize)) == 0)
        #expect(try CLI.run(Self.search(store)).status == 1)
        try FileManager.default.removeItem(atPath: store + "/index")
        let replay = try CLI.run(["replay", "--store", store])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(try CLI.run(Self.search(store)).stdout == cleanSearch)
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
    }

    @Test("another program's LMDB environment in index/: writers refuse it and write nothing to it; the log's reads answer")
    func foreignIndexEnvironment() throws {
        let (dir, store) = try Self.store(items: 3)
        defer { dir.remove() }
        let cleanItems = try CLI.run(Self.userItems(store)).stdout
        try FileManager.default.removeItem(atPath: store + "/index")
        try FileManager.default.createDirectory(atPath: store + "/index", withIntermediateDirectories: false)
        let python = try CLI.spawnAndWait("/usr/bin/python3", arguments: ["-c", """
            import lmdb
            env = lmdb.open('\(store)/index', max_dbs=4)
            db = env.open_db(b'their-data')
            with env.begin(write=True) as txn:
                txn.put(b'k', b'theirs', db=db)
            """], environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil)
        #expect(python == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: store + "/index/data.mdb"))
        let ops = try dir.file("ops.jsonl", [#"{"op":"indexSearchableItems","user":"u1","items":[{"uniqueIdentifier":"new"}]}"#])
        for command in [["apply", "--store", store, ops], ["replay", "--store", store], ["forget", "--store", store, "--user", "u2"]] {
            let run = try CLI.runBounded(command)
            #expect(run.exited && run.status == 1, "\(command): \(run)")
            #expect(run.stderr.contains("is not this store's index") && run.stderr.contains("their-data"), "\(command): \(run.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/index/data.mdb")) == before, "a writer wrote into another program's environment")
        let search = try CLI.runBounded(Self.search(store))
        #expect(search.exited && search.status == 1 && search.stderr.contains("not an index"), "\(search)")
        try Self.expectLogReadsAnswer(store, clean: cleanItems, "a foreign index/")
    }

    @Test("index is a file: every command says so (never no index yet, never a CocoaError); the log's reads answer")
    func indexIsAFile() throws {
        let (dir, store) = try Self.store(items: 3)
        defer { dir.remove() }
        let cleanItems = try CLI.run(Self.userItems(store)).stdout
        try FileManager.default.removeItem(atPath: store + "/index")
        try Data("not a directory\n".utf8).write(to: URL(fileURLWithPath: store + "/index"))
        let ops = try dir.file("ops.jsonl", [#"{"op":"indexSearchableItems","user":"u1","items":[{"uniqueIdentifier":"new"}]}"#])
        for command in [["apply", "--store", store, ops], Self.search(store), ["verify", "--store", store]] {
            let run = try CLI.runBounded(command)
            #expect(run.exited && run.status == 1, "\(command): \(run)")
            #expect(run.stderr.contains("\(store)/index is not a directory") && !run.stderr.contains("NSCocoaErrorDomain"), "\(command): \(run.stderr)")
        }
        try Self.expectLogReadsAnswer(store, clean: cleanItems, "index a file")
    }

    @Test("an index directory this user may not read is permission denied, never no index yet; the log's reads answer",
          .enabled(if: getuid() == 0, "needs root to run the commands as nobody"))
    func indexPermissionDenied() throws {
        let (dir, store) = try Self.store(items: 3)
        defer {
            chmod(store + "/index", 0o755)
            dir.remove()
        }
        let cleanItems = try CLI.run(Self.userItems(store)).stdout
        // The store is nobody's (its files are 0600 in a 0700 directory), all but its index, which nobody may open.
        #expect(chmod(dir.path, 0o755) == 0)
        for path in [store, store + "/data.mdb", store + "/lock.mdb"] { #expect(chown(path, 65534, 65534) == 0, "\(path)") }
        #expect(chmod(store + "/index", 0o000) == 0)
        let nobody = ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        let search = try CLI.run(Self.search(store), through: nobody)
        #expect(search.status == 1 && search.stderr.contains("permission denied") && search.stderr.contains(store + "/index")
                && !search.stderr.contains("no index"), "\(search.stderr)")
        let items = try CLI.run(Self.userItems(store), through: nobody)
        #expect(items.status == 0 && items.stdout == cleanItems, "\(items.stderr)")
    }

    @Test("index/lock.mdb deleted under a running writer: its indexer refuses and the writer says so; nothing written is lost; the next writer indexes it")
    func deletedIndexLockFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("first.jsonl", [Sample.good[0]])]).status == 0)
        let slow = try SlowWriter(store: store, in: dir)
        func send(_ n: Int) {
            slow.send(#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"slow-\#(n)","attributeSet":{"title":"findme \#(n)"}}]}"#)
        }
        func found() throws -> Set<String> {
            Set(try CLI.run(["search", "--store", store, "findme", "--limit", "100", "--json"]).objects().compactMap { $0["identifier"] as? String })
        }
        for n in 0..<5 { send(n) }
        // Indexed by the slow writer's indexer, as a reader sees.
        let deadline = Date().addingTimeInterval(60)
        while try found().count < 5 && Date() < deadline { usleep(50_000) }
        #expect(try found().count == 5)
        try FileManager.default.removeItem(atPath: store + "/index/lock.mdb")
        // A second writer, with a new index/lock.mdb: it writes and indexes.
        let other = try CLI.run(["apply", "--store", store, try dir.file("other.jsonl", (0..<5).map {
            #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"other-\#($0)","attributeSet":{"title":"findme other"}}]}"#
        })])
        #expect(other.status == 0, "\(other.stderr)")
        #expect(try found().count == 10)
        // The slow writer's next line: in the log; its indexer refuses the replaced lock file, and it says so.
        send(5)
        let (slowStatus, slowErrors) = slow.finish()
        #expect(slowStatus == 1, "\(slowErrors)")
        #expect(slowErrors.contains("what was written is in the log") && slowErrors.contains("index/lock.mdb was"), "\(slowErrors)")
        let items = Set(try CLI.run(["items", "--store", store, "--json"]).objects().compactMap { $0["uniqueIdentifier"] as? String })
        #expect(items.isSuperset(of: (0..<6).map { "slow-\($0)" } + (0..<5).map { "other-\($0)" }), "\(items.sorted())")
        // The next writer's indexer applies what the slow one could not.
        #expect(try CLI.run(["apply", "--store", store, "-"], input: "").status == 0)
        #expect(try found().count == 11)
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
        let replay = try CLI.run(["replay", "--verify", "--store", store, "--json"])
        #expect(try replay.object()["equal"] as? Bool == true, "\(replay.stdout) \(replay.stderr)")
    }

    @Test("a full disk under index/ alone: the log commits, the indexer's commit fails whole and is tried again, apply says where the index stopped; with space again, the next writer indexes the rest and replay --verify is equal",
          .enabled(if: getuid() == 0, "needs root to mount a small filesystem"))
    func fullIndexDisk() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        try FileManager.default.createDirectory(atPath: store + "/index", withIntermediateDirectories: true)
        let first = try dir.file("first.jsonl", [Sample.good[0]])
        // 300 distinct words an item: the index outgrows 1 MiB long before the log's disk fills.
        let fill = try dir.file("fill.jsonl", (0..<300).map { n in
            #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"big-\#(n)","attributeSet":{"title":"\#((0..<300).map { "w\(n % 97)x\($0)" }.joined(separator: " "))"}}]}"#
        })
        let last = try dir.file("last.jsonl", [#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"last","attributeSet":{"title":"findme"}}]}"#])
        // One shell in a mount namespace of its own: index/ on a 1 MiB tmpfs, the log beside it on the test's disk;
        // the index's disk is given room again before the last writer.
        let script = """
            mount -t tmpfs -o size=1m tmpfs "$1/index" || exit 99
            "$2" apply --store "$1" "$3" >/dev/null || exit 98
            "$2" apply --store "$1" --transaction-size 100 "$4" >/dev/null 2> "$6/apply.err"; echo "apply $?" > "$6/status"
            "$2" items --store "$1" --json > "$6/items.json"
            mount -o remount,size=64m "$1/index" || exit 97
            "$2" apply --store "$1" "$5" >/dev/null 2> "$6/last.err"; echo "last $?" >> "$6/status"
            "$2" search --store "$1" w5x299 --limit 1000 --json > "$6/search.json"
            "$2" replay --verify --store "$1" --json > "$6/replay.json"; echo "replay $?" >> "$6/status"
            """
        let status = try CLI.spawnAndWait("/usr/bin/unshare", arguments: ["-m", "sh", "-c", script, "sh", store, CLI.executable.path, first, fill, last, dir.path],
                                          environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil)
        #expect(status == 0)
        func read(_ name: String) -> String { (try? String(contentsOfFile: dir.sub(name), encoding: .utf8)) ?? "" }
        #expect(read("status") == "apply 1\nlast 0\nreplay 0\n", "\(read("status")) \(read("last.err"))")
        let applyErrors = read("apply.err")
        #expect(applyErrors.contains("what was written is in the log") && applyErrors.contains("the index stopped at")
                && applyErrors.contains("the disk holding \(store)/index is full"), "\(applyErrors)")
        // Every write is in the log and its views, though the index could not follow.
        let items = read("items.json")
        #expect((0..<300).allSatisfy { items.contains("\"big-\($0)\"") })
        // Indexed by the next writer: items 5, 102, 199 and 296 hold w5x299.
        let found = (try? JSONSerialization.jsonObject(with: Data(read("search.json").utf8))) as? [[String: Any]] ?? []
        #expect(Set(found.compactMap { $0["identifier"] as? String }) == ["big-5", "big-102", "big-199", "big-296"], "\(read("search.json"))")
        let replay = (try? JSONSerialization.jsonObject(with: Data(read("replay.json").utf8))) as? [String: Any]
        #expect(replay?["equal"] as? Bool == true, "\(read("replay.json"))")
    }
}
