import Foundation
import Testing

/// Files that are not regular files where the store keeps its data, lock
/// files and snapshots (a FIFO, a socket, a device, a directory) are refused
/// before they are opened, never waited for; an index environment that is
/// the log's own file (a hard link, a symbolic link, `index -> .`) is
/// refused before it is opened, and nothing is written into the log's
/// environment.
extension DamagedFileTests {
    /// Puts a node of `kind` at `path` (removing what is there).
    static func makeNode(_ kind: String, at path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        switch kind {
        case "FIFO": #expect(mkfifo(path, 0o600) == 0)
        case "character device": #expect(mknod(path, S_IFCHR | 0o600, (1 << 8) | 3) == 0)   // /dev/null's
        case "directory": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case "socket":
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                path.utf8CString.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(buffer.count - 1))) }
            }
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            #expect(bound == 0, "bind \(path): \(errno)")
            close(fd)
        default: Issue.record("unknown kind \(kind)")
        }
    }

    @Test("a FIFO, socket, device or directory at data.mdb, lock.mdb, index/data.mdb, index/lock.mdb or a snapshot's name: every command ends at once with an error naming it (or, for a snapshot, leaves it out), never a hang",
          .enabled(if: getuid() == 0, "mknod needs root"))
    func notRegularFiles() throws {
        let (dir, store) = try Self.store(items: 3)
        defer { dir.remove() }
        #expect(try CLI.run(["snapshot", "create", "--store", store]).status == 0)
        let write = try dir.file("write.jsonl", [#"{"op":"indexSearchableItems","user":"u1","items":[{"uniqueIdentifier":"late"}]}"#])
        let cleanItems = try CLI.run(Self.userItems(store)).stdout
        for kind in ["FIFO", "socket", "character device", "directory"] {
            for file in ["data.mdb", "lock.mdb", "index/data.mdb", "index/lock.mdb"] {
                let what = "\(kind) at \(file)"
                let copy = dir.sub("copy")
                try? FileManager.default.removeItem(atPath: copy)
                try FileManager.default.copyItem(atPath: store, toPath: copy)
                try Self.makeNode(kind, at: copy + "/" + file)
                let commands = file.hasPrefix("index/")
                    ? [Self.search(copy), ["verify", "--store", copy], ["apply", "--store", copy, write]]
                    : [["items", "--store", copy, "--user", "u1", "--json"], ["verify", "--store", copy], ["apply", "--store", copy, write]]
                for command in commands {
                    let run = try CLI.runBounded(command, timeout: 20)
                    #expect(run.exited, "\(what): \(command[0]) hung or died: \(run)")
                    #expect(run.status == 1 && run.stderr.contains(copy + "/" + file) && run.stderr.contains("regular file"),
                            "\(what): \(command[0]): \(run)")
                }
                if file.hasPrefix("index/") { try Self.expectLogReadsAnswer(copy, clean: cleanItems, what) }
            }
        }
        // Named like a snapshot: left out of every listing and rebuild, never opened as one.
        try Self.makeNode("FIFO", at: store + "/snapshots/00000000000000000002.snapshot")
        try Self.makeNode("FIFO", at: store + "/snapshots/00000000000000000002.index.snapshot")
        for command in [["snapshot", "list", "--store", store, "--json"], ["verify", "--store", store], ["stats", "--store", store],
                        ["replay", "--verify", "--store", store], ["replay", "--store", store], ["apply", "--store", store, write]] {
            let run = try CLI.runBounded(command, timeout: 30)
            #expect(run.exited && run.status == 0, "a FIFO named like a snapshot: \(command[0]): \(run)")
        }
    }

    @Test("index/data.mdb or index/lock.mdb a hard or symbolic link to the log's, index -> ., another store's log as index/: refused before anything is opened, nothing written into the log's environment")
    func indexIsTheLogsOwnFile() throws {
        let (dir, store) = try Self.store(items: 3)
        defer { dir.remove() }
        let write = try dir.file("write.jsonl", [#"{"op":"indexSearchableItems","user":"u1","items":[{"uniqueIdentifier":"late"}]}"#])
        let cleanItems = try CLI.run(Self.userItems(store)).stdout
        let cases: [(String, (String) throws -> Void)] = [
            ("index/data.mdb a hard link to data.mdb", { copy in
                try FileManager.default.removeItem(atPath: copy + "/index/data.mdb")
                #expect(link(copy + "/data.mdb", copy + "/index/data.mdb") == 0) }),
            ("index/data.mdb a symbolic link to data.mdb", { copy in
                try FileManager.default.removeItem(atPath: copy + "/index/data.mdb")
                #expect(symlink("../data.mdb", copy + "/index/data.mdb") == 0) }),
            ("index/lock.mdb a hard link to lock.mdb", { copy in
                try FileManager.default.removeItem(atPath: copy + "/index/lock.mdb")
                #expect(link(copy + "/lock.mdb", copy + "/index/lock.mdb") == 0) }),
            ("index -> .", { copy in
                try FileManager.default.removeItem(atPath: copy + "/index")
                #expect(symlink(".", copy + "/index") == 0) }),
        ]
        for (what, make) in cases {
            let copy = dir.sub("copy")
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: store, toPath: copy)
            try make(copy)
            let log = try Data(contentsOf: URL(fileURLWithPath: copy + "/data.mdb"))
            for command in [["apply", "--store", copy, write], ["replay", "--store", copy], Self.search(copy), ["verify", "--store", copy]] {
                let run = try CLI.runBounded(command, timeout: 30)
                #expect(run.exited && run.status == 1, "\(what): \(command[0]): \(run)")
                #expect(run.stderr.contains("(the same file: a link to it)") && !run.stderr.contains("already open in this process"),
                        "\(what): \(command[0]): \(run.stderr)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "/data.mdb")) == log, "\(what): the log's environment was written")
            try Self.expectLogReadsAnswer(copy, clean: cleanItems, what)
        }
        // Another store's log environment moved in as index/: not an index, never written.
        let copy = dir.sub("copy")
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        try FileManager.default.removeItem(atPath: copy + "/index")
        try FileManager.default.copyItem(atPath: store, toPath: copy + "/index")
        try? FileManager.default.removeItem(atPath: copy + "/index/index")
        let before = try Data(contentsOf: URL(fileURLWithPath: copy + "/index/data.mdb"))
        let apply = try CLI.runBounded(["apply", "--store", copy, write])
        #expect(apply.exited && apply.status == 1 && apply.stderr.contains("is not this store's index"), "\(apply)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "/index/data.mdb")) == before)
    }
}

extension DamagedFileTests {
    @Test("an LMDB environment without databases (its creator killed before the first commit) is an empty store: every read answers as for one, none calls it another program's; apply adopts it")
    func environmentWithoutDatabases() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        let python = try CLI.spawnAndWait("/usr/bin/python3", arguments: ["-c", "import lmdb; lmdb.open('\(store)').close()"],
                                          environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil)
        #expect(python == 0)
        #expect(FileManager.default.fileExists(atPath: store + "/data.mdb"))
        let reads: [([String], String?)] = [
            (["verify"], nil), (["items", "--json"], "[]\n"), (["users", "--json"], "[]\n"), (["log", "--json"], ""),
            (["current", "--json"], "[]\n"), (["snapshot", "list", "--json"], "[]\n"), (["replay", "--verify"], nil), (["stats", "--json"], nil),
        ]
        for (command, expected) in reads {
            let run = try CLI.runBounded(command + ["--store", store])
            #expect(run.exited && run.status == 0 && !run.stderr.contains("another program"), "\(command[0]): \(run)")
            if let expected { #expect(run.stdout == expected, "\(command[0]): \(run.stdout)") }
        }
        #expect(try CLI.run(["verify", "--store", store]).stdout.contains("head 0"))
        #expect(try CLI.run(["stats", "--store", store, "--json"]).object()["head"] as? Int == 0)
        let apply = try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl", Sample.good)])
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
    }
}

extension DamagedFileTests {
    @Test("a full disk under snapshot create and replay --to P --into DIR: each fails saying the disk is full (never a Foundation error) and leaves nothing behind: no snapshot, no partial file, no store in DIR",
          .enabled(if: getuid() == 0, "needs root to mount a small filesystem"))
    func fullDiskLeavesNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        let big = (0..<300).map { n in
            #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"big-\#(n)","attributeSet":{"title":"\#(String(repeating: "word\(n % 97) ", count: 200))"}}],"at":"2026-11-22T10:01:00Z"}"#
        }
        #expect(try CLI.run(["apply", "--store", store, try dir.file("big.jsonl", big)]).status == 0)
        let travel = dir.sub("travel")
        for path in [store + "/snapshots", travel] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        let script = """
            mount -t tmpfs -o size=12k tmpfs "$1/snapshots" || exit 99
            mount -t tmpfs -o size=12k tmpfs "$3" || exit 99
            "$2" snapshot create --store "$1" 2> "$4/snapshot.err"; echo "snapshot $?" > "$4/status"
            ls -A "$1/snapshots" > "$4/snapshots.list" || echo "ls $?" >> "$4/status"
            "$2" replay --to 200 --into "$3/then" --store "$1" 2> "$4/replay.err"; echo "replay $?" >> "$4/status"
            ls -A "$3" > "$4/travel.list" || echo "ls $?" >> "$4/status"
            """
        let status = try CLI.spawnAndWait("/usr/bin/unshare", arguments: ["-m", "sh", "-c", script, "sh", store, CLI.executable.path, travel, dir.path],
                                          environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: nil)
        #expect(status == 0)
        func read(_ name: String) -> String { (try? String(contentsOfFile: dir.sub(name), encoding: .utf8)) ?? "" }
        #expect(read("status") == "snapshot 1\nreplay 1\n", "\(read("status"))")
        for name in ["snapshot.err", "replay.err"] {
            #expect(read(name).contains("is full") && !read(name).contains("NSCocoaErrorDomain"), "\(name): \(read(name))")
        }
        #expect(read("snapshots.list") == "", "snapshot create left \(read("snapshots.list"))")
        #expect(read("travel.list") == "", "replay --into left \(read("travel.list"))")
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
    }
}
