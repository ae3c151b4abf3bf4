import Foundation
import Testing

/// Who may read a store's files, and who owns them: the store's directories
/// are created 0700 and its files 0600 (they hold every user's data); what
/// a root process creates in a service's store takes the store directory's
/// owner; a writer run as another (unprivileged) user is refused.
@Suite("Store files: modes and owners")
struct StoreFilesTests {
    static func owner(_ name: String) -> (uid: uid_t, gid: gid_t) {
        guard let entry = getpwnam(name) else { return (65534, 65534) }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    static func running(as user: String) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(owner(user).gid)", "--clear-groups"]
    }

    /// Every path under `root` (itself included), with its stat.
    static func entries(under root: String) -> [(String, stat)] {
        var result: [(String, stat)] = []
        var info = stat()
        if lstat(root, &info) == 0 { result.append((".", info)) }
        for case let name as String in FileManager.default.enumerator(atPath: root) ?? FileManager.DirectoryEnumerator() {
            if lstat((root as NSString).appendingPathComponent(name), &info) == 0 { result.append((name, info)) }
        }
        return result
    }

    @Test("under umask 022, apply and snapshot create make the store's directories 0700 and its files 0600")
    func modes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        let umask022 = ["/bin/sh", "-c", #"umask 022; exec "$0" "$@""#]
        let apply = try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl", Sample.good)], through: umask022)
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(try CLI.run(["snapshot", "create", "--store", store], through: umask022).status == 0)
        let entries = Self.entries(under: store)
        #expect(entries.count >= 9, "\(entries.map(\.0))")
        for (name, info) in entries {
            let isDirectory = info.st_mode & S_IFMT == S_IFDIR
            #expect(info.st_mode & 0o777 == (isDirectory ? 0o700 : 0o600),
                    "\(name): mode \(String(info.st_mode & 0o777, radix: 8)), readable by others")
        }
    }

    @Test("maintenance run as root in a service's store (snapshot create, replay rebuilding index/, forget, compact): every file and directory it creates takes the store directory's owner; the service goes on",
          .enabled(if: getuid() == 0, "needs root"))
    func rootMaintenance() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let service = Self.owner("nobody")
        let home = dir.sub("service")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        #expect(chmod(dir.path, 0o755) == 0 && chown(home, service.uid, service.gid) == 0)
        let store = home + "/store"
        let ops = try dir.file("ops.jsonl", Sample.good + DerivedHistoryTests.usersItems(4, prefix: "u"))
        #expect(chmod(ops, 0o644) == 0)
        let created = try CLI.run(["apply", "--store", store, ops], through: Self.running(as: "nobody"))
        #expect(created.status == 0, "\(created.stderr)")
        // Maintenance as root: a snapshot, index/ rebuilt from nothing, a forget, a compaction.
        #expect(try CLI.run(["snapshot", "create", "--store", store]).status == 0)
        try FileManager.default.removeItem(atPath: store + "/index")
        #expect(try CLI.run(["replay", "--store", store]).status == 0)
        #expect(try CLI.run(["forget", "--store", store, "--user", "u-1"]).status == 0)
        #expect(try CLI.run(["snapshot", "create", "--store", store]).status == 0)
        #expect(try CLI.run(["compact", "--store", store]).status == 0)
        for (name, info) in Self.entries(under: store) {
            #expect(info.st_uid == service.uid && info.st_gid == service.gid, "\(name) belongs to \(info.st_uid):\(info.st_gid)")
        }
        // The service goes on: it writes, forgets, searches, snapshots.
        let more = try dir.file("more.jsonl", DerivedHistoryTests.usersItems(6, prefix: "v"))
        #expect(chmod(more, 0o644) == 0)
        for command in [["apply", "--store", store, more], ["forget", "--store", store, "--user", "u-2"],
                        ["search", "--store", store, "--user", "u-3", "uword", "--json"], ["snapshot", "create", "--store", store]] {
            let run = try CLI.run(command, through: Self.running(as: "nobody"))
            #expect(run.status == 0, "\(command[0]) as the service: \(run.stderr)")
        }
    }

    @Test("a writer run as another unprivileged user than the store's owner is refused, naming both, and creates nothing",
          .enabled(if: getuid() == 0, "needs root to set up the users"))
    func otherUserRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        let ops = try dir.file("ops.jsonl", Sample.good)
        #expect(try CLI.run(["apply", "--store", store, ops]).status == 0)
        // The store opened to everyone, so that only ownership stands in the way.
        #expect(chmod(dir.path, 0o755) == 0 && chmod(ops, 0o644) == 0)
        let service = Self.owner("nobody")
        for (name, _) in Self.entries(under: store) {
            let path = (store as NSString).appendingPathComponent(name)
            #expect(chown(path, service.uid, service.gid) == 0)
            var info = stat()
            lstat(path, &info)
            #expect(chmod(path, info.st_mode & S_IFMT == S_IFDIR ? 0o777 : 0o666) == 0)
        }
        let before = Self.entries(under: store).map(\.0).sorted()
        for command in [["apply", "--store", store, ops], ["snapshot", "create", "--store", store], ["replay", "--store", store]] {
            let run = try CLI.run(command, through: Self.running(as: "daemon"))
            #expect(run.status == 1 && run.stderr.contains("belongs to uid \(service.uid)") && run.stderr.contains("permission denied"),
                    "\(command[0]): \(run)")
        }
        #expect(Self.entries(under: store).map(\.0).sorted() == before)
    }
}

extension StoreFilesTests {
    /// Runs `eventlog ARGS` in the working directory `directory` (bytes, UTF-8 or not): its exit status.
    static func run(in directory: [UInt8], _ arguments: [String], stdout: String = "/dev/null") throws -> Int32 {
        let shell = [Array("-c".utf8), Array(#"cd "$0" && exec "$@""#.utf8), directory, Array(CLI.executable.path.utf8)]
        let child = try CLI.spawn("/bin/sh", byteArguments: shell + arguments.map { Array($0.utf8) },
                                  environment: ProcessInfo.processInfo.environment, stdin: "/dev/null", stdout: stdout, stderr: "/dev/null")
        child.waitUntilExit()
        return child.terminationStatus
    }

    /// `stat(2)` of a path given as bytes.
    static func exists(_ path: [UInt8]) -> Bool {
        var info = stat()
        return (path + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { stat($0.baseAddress!, &info) } } == 0
    }

    @Test("a relative --store under working directories whose names are different invalid UTF-8 bytes: each gets its own store there, none under a directory named U+FFFD")
    func relativeStoreUnderNonUTF8Directories() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let parent = Array(dir.path.utf8)
        let first = parent + Array("/".utf8) + [0xFF], second = parent + Array("/".utf8) + [0xFE]
        for directory in [first, second] {
            let made = (directory + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { mkdir($0.baseAddress!, 0o755) } }
            #expect(made == 0)
        }
        let one = try dir.file("one.jsonl", DerivedHistoryTests.usersItems(1, prefix: "one"))
        let two = try dir.file("two.jsonl", DerivedHistoryTests.usersItems(2, prefix: "two"))
        #expect(try Self.run(in: first, ["apply", "--store", "events", one]) == 0)
        #expect(try Self.run(in: second, ["apply", "--store", "events", two]) == 0)
        #expect(try Self.run(in: first, ["snapshot", "create", "--store", "events"]) == 0)
        #expect(try Self.run(in: second, ["replay", "--store", "events"]) == 0)
        #expect(try Self.run(in: second, ["compact", "--store", "events"]) == 0)
        for directory in [first, second] {
            #expect(Self.exists(directory + Array("/events/data.mdb".utf8)), "no store in its own working directory")
            #expect(Self.exists(directory + Array("/events/index/data.mdb".utf8)))
        }
        #expect(Self.exists(first + Array("/events/snapshots".utf8)))
        #expect(!FileManager.default.fileExists(atPath: dir.sub("\u{FFFD}")), "a directory named U+FFFD was made")
        // Each reads its own: one user in the first, two in the second.
        for (directory, users) in [(first, 1), (second, 2)] {
            let out = try dir.file("users-\(users).json", [])
            #expect(try Self.run(in: directory, ["users", "--store", "events", "--json"], stdout: out) == 0)
            let listed = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [[String: Any]]
            #expect(listed?.count == users, "\(String(describing: listed))")
        }
    }
}
