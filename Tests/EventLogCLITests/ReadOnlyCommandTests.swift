import Foundation
import Testing

/// SPEC §2 "Reading never writes": every command that only reads opens the
/// store read-only, so it never waits for a writer and works on a store it
/// may not write. Beside another process that holds the store:
/// `Tools/Tests/EventLogCLIProcessTests/ReadOnlyCommandProcessTests.swift`.
@Suite("read commands open the store read-only", .serialized)
struct ReadOnlyCommandTests {
    /// What every read command prints on `store`, through `wrapper` if given.
    func outputs(_ store: String, through wrapper: [String]? = nil) throws -> [String: CLIResult] {
        var outputs: [String: CLIResult] = [:]
        for command in Stores.readCommands(store) {
            let run = try wrapper.map { try CLI.run(command, through: $0) } ?? CLI.run(command)
            outputs[command.prefix(while: { !$0.hasPrefix("--") }).joined(separator: " ")] = run
        }
        return outputs
    }

    /// Every read command answers on the restricted store as on the open one (stats aside, whose
    /// reader slots say that no lock file was used), and the store's bytes did not change.
    func expectSameAnswers(_ store: String, through wrapper: [String]) throws {
        let expected = try outputs(store)
        let data = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
        let restricted = try outputs(store, through: wrapper)
        for (command, run) in restricted.sorted(by: { $0.key < $1.key }) {
            #expect(run.status == 0, "\(command): \(run.stderr)")
            if command == "stats" {
                let object = try run.object(), open = try expected[command]!.object()
                #expect((object["readers"] as? [String: Any])?["lockFile"] as? Bool == false)
                for key in ["head", "views", "eventCounts", "databases"] {
                    #expect(jsonEqual(object[key] as Any, open[key] as Any), "stats \(key)")
                }
            } else {
                #expect(run.stdout == expected[command]!.stdout, "\(command)")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == data)
    }

    /// The tests run as root, which ignores permission bits: a chmod'ed
    /// directory would prove nothing. A read-only bind mount in a mount
    /// namespace of its own (`unshare -m`, which root may do here) is what an
    /// audit copy mounted read-only looks like: writes fail with EROFS.
    static let canMountReadOnly: Bool = {
        let status = try? CLI.spawnAndWait("/usr/bin/unshare", arguments: ["-m", "sh", "-c", "mount --bind -o ro /tmp /tmp"],
                                           environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: nil, stderr: "/dev/null")
        return status == 0
    }()

    @Test("a store on a read-only mount (bind mount -o ro): every read command answers as before, the store unchanged",
          .enabled(if: canMountReadOnly, "needs unshare -m and mount (root in a namespace)"))
    func readOnlyMount() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        // `sh -c SCRIPT STORE eventlog ARGS…`: mount the store read-only over itself, then run the command.
        try expectSameAnswers(store, through: ["/usr/bin/unshare", "-m", "sh", "-c",
                                               #"mount --bind -o ro "$0" "$0" && exec "$@""#, store])
        // Proof that the mount is read-only: a write command fails there.
        let write = try CLI.run(["apply", "--store", store, "-"], through: ["/usr/bin/unshare", "-m", "sh", "-c",
                                                                            #"mount --bind -o ro "$0" "$0" && exec "$@""#, store])
        #expect(write.status != 0)
    }

    @Test("a store its user may only read (another owner, 0755/0644): every read command answers as before, with or without lock.mdb",
          .enabled(if: getuid() == 0, "needs root to run the commands as nobody"))
    func unprivilegedReader() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        // The parents must be searchable by nobody; the store's directories and files
        // (created 0700 and 0600) are opened to others by the operator: 0755 and 0644.
        for path in [dir.path, store, store + "/index"] { #expect(chmod(path, 0o755) == 0) }
        for file in ["data.mdb", "lock.mdb", "index/data.mdb", "index/lock.mdb"] { #expect(chmod(store + "/" + file, 0o644) == 0) }
        let nobody = ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        try expectSameAnswers(store, through: nobody)
        // lock.mdb can be neither written nor created by nobody.
        try FileManager.default.removeItem(atPath: store + "/lock.mdb")
        let stats = try CLI.run(["stats", "--json", "--store", store], through: nobody)
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store + "/lock.mdb"))
        let write = try CLI.run(["apply", "--store", store, "-"], through: nobody)
        #expect(write.status != 0)
    }
}
