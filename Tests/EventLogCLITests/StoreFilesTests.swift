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
