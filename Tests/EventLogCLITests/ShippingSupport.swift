import Foundation
import Testing

/// The PostgreSQL server of the shipping tests: `Scripts/with-postgres.sh`
/// starts a private one and names it in the environment. Without it the
/// tests are skipped on a workstation, and fail under CI.
enum Postgres {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["EVENTLOG_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let restartScript = environment["EVENTLOG_TEST_POSTGRES_RESTART"].flatMap { $0.isEmpty ? nil : $0 }
    static let isCI = environment["CI"] == "true"
    /// Enabled under CI even without a server, so that a missing one fails.
    static let enabled = url != nil || isCI

    static func requireURL() throws -> String {
        try #require(url, "CI=true but EVENTLOG_TEST_POSTGRES_URL is not set: run the tests through Scripts/test.sh (Scripts/with-postgres.sh)")
    }

    /// Crashes the server (`pg_ctl stop -m immediate`) and starts it again.
    static func crashAndRestart() throws {
        let script = try #require(restartScript, "EVENTLOG_TEST_POSTGRES_RESTART is not set")
        // Not Foundation's Process, whose waitUntilExit was seen to miss this
        // child's exit beside the background processes the test kills.
        let status = try CLI.spawnAndWait("/bin/bash", arguments: [script], environment: ProcessInfo.processInfo.environment,
                                          stdin: nil, stdout: nil, stderr: nil)
        #expect(status == 0, "restarting PostgreSQL failed: exit status \(status)")
    }

    /// A stream name of its own for each test.
    static func stream(_ label: String) -> String { "\(label)-\(UUID().uuidString.prefix(8))" }

    /// Suites run in parallel, and one test crashes the server: it runs
    /// `exclusive`, every other test that needs the server `shared`. Waiting
    /// sleeps (it does not hold a cooperative thread); `body` runs on the
    /// thread that took the lock and releases it there.
    static func shared<R>(_ body: () throws -> R) async throws -> R {
        while !serverLock.tryReadLock() { try await Task.sleep(for: .milliseconds(100)) }
        defer { serverLock.unlock() }
        return try body()
    }

    static func exclusive<R>(_ body: () throws -> R) async throws -> R {
        while !serverLock.tryWriteLock() { try await Task.sleep(for: .milliseconds(100)) }
        defer { serverLock.unlock() }
        return try body()
    }

    private static let serverLock = ReadWriteLock()

    /// `psql -At -c SQL` against the test server: its output.
    static func psql(_ sql: String) throws -> String {
        let url = try requireURL()
        let version = try #require(try FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql").sorted().last)
        return try output("/usr/lib/postgresql/\(version)/bin/psql", [url, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    /// The log of the store at `path` as "position hex" lines, read by
    /// Python's `lmdb` (without this code).
    static func logDump(_ path: String) throws -> String {
        let script = """
            import lmdb, struct, sys
            env = lmdb.open(sys.argv[1], readonly=True, lock=False, max_dbs=128, subdir=True)
            log = env.open_db(b"log", create=False)
            with env.begin() as txn:
                for key, value in txn.cursor(db=log):
                    print(struct.unpack(">Q", key)[0], bytes(value).hex())
            """
        return try output("/usr/bin/python3", ["-c", script, path])
    }

    /// The rows of `stream` as "position hex" lines, as ``logDump(_:)`` prints a log.
    static func streamDump(_ stream: String) throws -> String {
        try psql("SELECT position || ' ' || encode(record, 'hex') FROM eventlog_records WHERE stream = '\(stream)' ORDER BY position")
    }

    /// How many rows of `stream` hold `text`'s bytes.
    static func rowsContaining(_ text: String, stream: String) throws -> Int {
        Int(try psql("SELECT count(*) FROM eventlog_records WHERE stream = '\(stream)' AND position(convert_to('\(text)', 'UTF8') in record) > 0")
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    static func output(_ executable: String, _ arguments: [String]) throws -> String {
        let run = try CLI.run(arguments, executable: URL(fileURLWithPath: executable))
        #expect(run.status == 0, "\(executable) \(arguments.first ?? ""): \(run.stderr)")
        return run.stdout
    }
}

/// `eventlog` running in the background (ship or follow without --once), to be killed.
final class Background {
    let process: SpawnedProcess
    let log: URL

    init(_ arguments: [String]) throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("eventlog-bg-\(UUID().uuidString)")
        try Data().write(to: log)
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "EVENTLOG_STORE")
        // One descriptor for both, so that neither overwrites the other.
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        process = try CLI.spawn(CLI.executable.path, arguments: arguments, environment: env, stdin: "/dev/null", stdout: nil, stderr: nil,
                                stdoutDescriptor: handle.fileDescriptor, stderrDescriptor: handle.fileDescriptor)
    }

    var isRunning: Bool { process.isRunning }

    /// SIGKILL, then what it printed.
    @discardableResult
    func kill() -> String {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        defer { try? FileManager.default.removeItem(at: log) }
        return (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    }
}

/// Multi-user operations, each with its own "at", so that two stores fed
/// the same lines hold the same records (and the same links).
enum ShippingSample {
    static let users = ["u1", "u2", "u3", "u4"]
    static let devices = ["phone", "laptop", "tablet"]

    static func declare() -> String {
        #"{"op":"declareActivityTypes","types":["com.example.app.viewOrder","com.example.app.browse"],"at":"2026-11-22T09:00:00Z"}"#
    }

    /// Operations `start ..< start + count` of four users: activities
    /// created, updated, made current and resigned across devices, items
    /// indexed and deleted, saved copies removed; the same identifiers and
    /// words in every user's space. Operation i (i % 6 ≠ 0) acts on what
    /// the ones before it created, so a range applied alone starts at a
    /// multiple of 6.
    static func operations(_ range: Range<Int>) -> [String] {
        var lines: [String] = []
        for i in range {
            // Each block of six operations is one user's (the later ones act
            // on what the first created).
            let user = users[(i / 6) % users.count]
            let device = devices[i % devices.count]
            let at = time(i)
            switch i % 6 {
            case 0, 3:
                lines.append(#"{"op":"createActivity","activity":"a\#(i)","activityType":"com.example.app.viewOrder","device":"\#(device)","user":"\#(user)","title":"Order \#(i) latte","userInfo":{"orderID":\#(i)},"eligibleForSearch":true,"persistentIdentifier":"order-\#(i)","keywords":["coffee","n\#(i % 7)"],"at":"\#(at)"}"#)
                lines.append(#"{"op":"becomeCurrent","user":"\#(user)","activity":"a\#(i)","at":"\#(at)"}"#)
            case 1:
                lines.append(#"{"op":"updateActivity","user":"\#(user)","activity":"a\#(i - 1)","title":"Oat latte \#(i)","keywords":["oat"],"at":"\#(at)"}"#)
            case 2:
                lines.append(#"{"op":"indexSearchableItems","user":"\#(user)","items":[{"uniqueIdentifier":"item-\#(i)","domainIdentifier":"menu.drinks","attributeSet":{"title":"Menu \#(i) 抹茶","keywords":["tea"]}}],"at":"\#(at)"}"#)
            case 4:
                lines.append(#"{"op":"resignCurrent","user":"\#(user)","activity":"a\#(i - 1)","at":"\#(at)"}"#)
                lines.append(#"{"op":"deleteSearchableItems","user":"\#(user)","identifiers":["item-\#(i - 2)"],"at":"\#(at)"}"#)
            default:
                lines.append(#"{"op":"deleteSavedUserActivities","user":"\#(user)","persistentIdentifiers":["order-\#(i - 5)"],"at":"\#(at)"}"#)
            }
        }
        return lines
    }

    static func time(_ i: Int) -> String {
        let date = Date(timeIntervalSince1970: 1_795_000_000 + Double(i))
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}

/// What a store shows: its last link and what every read prints.
struct StoreView: Equatable {
    var head: Int
    var lastLink: String
    var reads: [String: String]

    init(_ store: String) throws {
        let verify = try CLI.run(["verify", "--store", store, "--json"])
        #expect(verify.status == 0, "verify \(store): \(verify.stderr)")
        let report = try verify.object()
        head = report["head"] as? Int ?? -1
        lastLink = report["lastLink"] as? String ?? ""
        reads = [:]
        let now = ["--now", "2026-11-25T00:00:00Z"]
        var commands: [[String]] = [["users"], ["log"]]
        for user in ShippingSample.users + [""] {
            for read in [["current"], ["saved"], ["items"], ["search", "coffee"] + now, ["search", "抹茶"] + now,
                         ["query", #"keywords == "coffee""#] + now, ["client-state"], ["suggestions"] + now] {
                commands.append(read + ["--user", user])
            }
        }
        for command in commands {
            let result = try CLI.run(command + ["--store", store, "--json"])
            #expect(result.status == 0, "\(command) on \(store): \(result.stderr)")
            reads[command.joined(separator: " ")] = result.stdout
        }
        // The index, built by the store's own indexer: where it stands and what each of its databases holds.
        let stats = try CLI.run(["stats", "--store", store, "--json"]).object()
        let index = stats["index"] as? [String: Any] ?? [:]
        reads["index applied"] = "\(index["applied"] as? Int ?? -1), behind \(index["behind"] as? Int ?? -1)"
        for database in index["databases"] as? [[String: Any]] ?? [] {
            reads["index/\(database["name"] as? String ?? "?") entries"] = "\(database["entries"] as? Int ?? -1)"
        }
    }
}

/// `eventlog replay --verify` on `store` finds the views equal to a rebuild.
func expectViewsVerify(_ store: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let result = try CLI.run(["replay", "--verify", "--store", store, "--json"])
    #expect(result.status == 0, "replay --verify \(store): \(result.stderr)", sourceLocation: sourceLocation)
    #expect(try result.object()["equal"] as? Bool == true, sourceLocation: sourceLocation)
}

/// `pthread_rwlock_t`, for ``Postgres/shared(_:)`` and ``Postgres/exclusive(_:)``.
final class ReadWriteLock: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init() { pthread_rwlock_init(lock, nil) }
    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// `pthread_rwlock_tryrdlock`: true when taken.
    func tryReadLock() -> Bool { pthread_rwlock_tryrdlock(lock) == 0 }
    /// `pthread_rwlock_trywrlock`: true when taken.
    func tryWriteLock() -> Bool { pthread_rwlock_trywrlock(lock) == 0 }
    func unlock() { pthread_rwlock_unlock(lock) }
}
