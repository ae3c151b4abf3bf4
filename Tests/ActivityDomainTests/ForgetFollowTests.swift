import EventLog
import Foundation
import LMDB
import Testing
@testable import ActivityDomain

/// A forget carried to a follower by `appendRecords`, as `eventlog follow`
/// and `restore` carry it from PostgreSQL (the tests against a server are in
/// `ShippingForgetTests`): here the leader's own log stands in for the
/// stream, in batches of every size, so that redacted records arrive before
/// the record that redacted them.
@Suite("A forget carried to followers")
struct ForgetFollowTests {
    static let marker = "QXFOLLOWMARK"

    /// A leader where alice (with markers) acts before and after `split`,
    /// others act around her, and alice is forgotten; returns the leader
    /// and the head at `split`.
    static func leader(at path: String, atSplit: (ActivityStore) throws -> Void = { _ in }) throws -> (store: ActivityStore, split: Position) {
        let store = try ActivityStore(path: path, options: testOptions())
        try store.declareActivityTypes([viewOrder], at: at(0))
        try ForgetUserTests.fill(store, user: "alice", marker: marker, start: 1)
        try ForgetUserTests.fill(store, user: "bob", marker: "bobtext", start: 10)
        let split = try store.eventStore.head()
        try atSplit(store)
        // alice acts on; carol arrives (after alice: her id depends on alice's).
        var late = makeActivity("a2", device: "laptop")
        late.title = "Mocha \(marker)late"
        late.eligibleForSearch = true
        try store.user("alice").createActivity(late, at: at(20))
        try store.user("alice").becomeCurrent("a2", at: at(21))
        try ForgetUserTests.fill(store, user: "carol", marker: "caroltext", start: 22)
        try store.user("alice").resignCurrent("a2", at: at(30))
        try store.forgetUser("alice", at: at(31))
        try ForgetUserTests.fill(store, user: "dave", marker: "davetext", start: 40)
        return (store, split)
    }

    /// Appends the leader's records after the follower's head through `end`,
    /// `batch` at a time, each batch with the redaction records that
    /// authorize its redacted records (what the stream's
    /// `eventlog_redactions` table gives a follower).
    static func follow(_ follower: ActivityStore, from leader: ActivityStore, through end: Position, batch: Int) throws {
        var position = try follower.eventStore.head()
        while position < end {
            let records = try leader.eventStore.records(after: position, limit: min(batch, Int(end - position)))
            var authorizations: [LogRecord] = []
            for record in records where record.isRedacted {
                let by = try #require(try leader.eventStore.event(at: record.position)?.redactedBy)
                if !authorizations.contains(where: { $0.position == by }) {
                    authorizations.append(try #require(try leader.eventStore.record(at: by)))
                }
            }
            position = try follower.eventStore.appendRecords(records, authorizations: authorizations)
        }
    }

    /// Every view database's entries, by name.
    static func views(_ store: ActivityStore) throws -> [String: [[UInt8]]] {
        try store.eventStore.read { txn in
            var result: [String: [[UInt8]]] = [:]
            for projection in store.eventStore.views.all {
                for name in projection.databaseNames {
                    let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
                    let cursor = try db.cursor(in: txn)
                    var entries: [[UInt8]] = []
                    var entry = try cursor.firstBytes()
                    while let (key, value) = entry {
                        entries.append([UInt8](key))
                        entries.append([UInt8](value))
                        entry = try cursor.nextBytes()
                    }
                    result[name] = entries
                }
            }
            return result
        }
    }

    static func expectSameLog(_ a: ActivityStore, _ b: ActivityStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let head = try a.eventStore.head()
        #expect(try b.eventStore.head() == head, sourceLocation: sourceLocation)
        #expect(try a.eventStore.records(after: 0, limit: .max, maxBytes: .max) == b.eventStore.records(after: 0, limit: .max, maxBytes: .max),
                "the logs differ", sourceLocation: sourceLocation)
    }

    /// `Scripts/verify_log.py STORE`: the independent reader's exit status and output.
    static func independentReader(_ store: String) throws -> (status: Int32, output: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Scripts/verify_log.py").standardizedFileURL.path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, store]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func expectNoMarker(_ store: ActivityStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for record in try store.eventStore.records(after: 0, limit: .max, maxBytes: .max) {
            #expect(!record.bytes.contains(subsequence: Array(marker.utf8)), "position \(record.position)", sourceLocation: sourceLocation)
        }
    }

    @Test("a follower that lags across a forget redacts what it holds, takes the rest redacted, and ends byte for byte the leader's", arguments: [1, 2, 5, 1_000])
    func lagging(batch: Int) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let follower = try ActivityStore(path: dir + "/follower", options: testOptions())
        let (leader, split) = try Self.leader(at: dir + "/leader") { leader in
            try Self.follow(follower, from: leader, through: try leader.eventStore.head(), batch: batch)
        }
        #expect(try follower.eventStore.head() == split)
        #expect(try follower.users().contains { $0.user == "alice" })
        // The follower holds alice's first records unredacted; the leader no longer does.
        #expect(try leader.eventStore.records(after: 0, limit: Int(split)).contains { $0.isRedacted })
        #expect(try !follower.eventStore.records(after: 0, limit: Int(split)).contains { $0.isRedacted })

        // Up to just before the forget: alice's later records arrive redacted,
        // authorized by the redaction record still ahead (pending).
        let head = try leader.eventStore.head()
        let forget = try #require(try leader.eventStore.events().first { $0.type == RedactionRecord.type }).position
        try Self.follow(follower, from: leader, through: forget - 1, batch: batch)
        let pending = try follower.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(pending.isValid, "\(String(describing: pending.firstProblem))")
        #expect(pending.pendingRedactions.map(\.position) == [forget])
        #expect(pending.pendingRedactions.first?.link == (try leader.eventStore.record(at: forget))?.link)
        #expect(try follower.eventStore.verifyViews(full: true).isEqual)

        try Self.follow(follower, from: leader, through: head, batch: batch)
        try Self.expectSameLog(leader, follower)
        try Self.expectNoMarker(follower)
        #expect(try Self.views(follower) == Self.views(leader))
        let report = try follower.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(report.isValid && report.pendingRedactions.isEmpty, "\(String(describing: report.firstProblem))")
        #expect(try follower.eventStore.pendingRedactions().isEmpty)
        #expect(try follower.eventStore.verifyViews(full: true).isEqual)
        #expect(try !follower.users().contains { $0.user == "alice" })
        for user in ["alice", "bob", "carol", "dave"] {
            #expect(try UserSpaceIsolationTests.reads(of: follower.user(user)) == UserSpaceIsolationTests.reads(of: leader.user(user)), "\(user)")
        }
    }

    @Test("a follower or restore started after the forget never shows the user; short of the forget it verifies with a pending authorization")
    func fromScratch() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (leader, split) = try Self.leader(at: dir + "/leader")
        let forget = try #require(try leader.eventStore.events().first { $0.type == RedactionRecord.type }).position

        // A restore up to a position before the forget.
        let partial = try ActivityStore(path: dir + "/partial", options: testOptions())
        try Self.follow(partial, from: leader, through: split + 2, batch: 3)
        try Self.expectNoMarker(partial)
        let report = try partial.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        #expect(report.pendingRedactions.map(\.position) == [forget])
        let python = try Self.independentReader(dir + "/partial")
        #expect(python.status == 0 && python.output.contains("pending: \(report.pendingRedactions[0].covers) redacted records are authorized by the redaction record at position \(forget)"),
                "\(python.output)")
        #expect(try !partial.users().contains { $0.user == "alice" })
        #expect(try UserSpaceIsolationTests.reads(of: partial.user("alice")).allSatisfy { !$0.contains(Self.marker) })
        #expect(try partial.user("alice").activities().isEmpty && partial.user("alice").items().isEmpty)
        #expect(try partial.eventStore.verifyViews(full: true).isEqual)
        // Reopened, and rebuilt from the log alone, it still does not show her.
        let travel = dir + "/travel"
        try partial.eventStore.replay(through: split, into: travel)
        let then = try ActivityStore(path: travel, options: testOptions())
        #expect(try !then.users().contains { $0.user == "alice" })
        let travelled = try then.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(travelled.isValid && travelled.pendingRedactions.map(\.position) == [forget], "\(String(describing: travelled.firstProblem))")
        #expect(try then.eventStore.verifyViews(full: true).isEqual)
        // The leader's own time travel to before the forget: the same.
        let leaderTravel = dir + "/leader-travel"
        try leader.eventStore.replay(through: split, into: leaderTravel)
        let leaderThen = try ActivityStore(path: leaderTravel, options: testOptions())
        let leaderTravelled = try leaderThen.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(leaderTravelled.isValid && leaderTravelled.pendingRedactions.map(\.position) == [forget],
                "\(String(describing: leaderTravelled.firstProblem))")
        #expect(try leaderThen.eventStore.verifyViews(full: true).isEqual)
        #expect(try Self.views(leaderThen) == Self.views(then))

        // Followed on to the end, it is the leader.
        try Self.follow(partial, from: leader, through: try leader.eventStore.head(), batch: 4)
        try Self.expectSameLog(leader, partial)
        #expect(try Self.views(partial) == Self.views(leader))
        #expect(try partial.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload).pendingRedactions.isEmpty)
    }

    @Test("a redacted record without an authorization, and an authorization the log then contradicts, are refused; nothing written")
    func refusals() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (leader, _) = try Self.leader(at: dir + "/leader")
        let forget = try #require(try leader.eventStore.events().first { $0.type == RedactionRecord.type }).position
        let redacted = try #require(try leader.eventStore.records(after: 0, limit: .max).first { $0.isRedacted })
        let follower = try ActivityStore(path: dir + "/follower", options: testOptions())
        try Self.follow(follower, from: leader, through: redacted.position - 1, batch: 100)
        let before = try follower.eventStore.head()

        let bare = #expect(throws: EventLogError.self) { try follower.eventStore.appendRecords([redacted]) }
        #expect(bare?.code == .corrupt && bare?.position == redacted.position, "\(String(describing: bare))")
        #expect(bare?.message.contains("no redaction record authorizes it") == true)

        // An authorization that is not a redaction record, or a damaged one.
        let plain = try #require(try leader.eventStore.record(at: 1))
        let notOne = try LogRecord(position: forget, bytes: plain.bytes)
        #expect(throws: EventLogError.self) { try follower.eventStore.appendRecords([redacted], authorizations: [notOne]) }
        var bytes = try #require(try leader.eventStore.record(at: forget)).bytes
        bytes[bytes.count - 6] ^= 1
        #expect(throws: EventLogError.self) {
            try follower.eventStore.appendRecords([redacted], authorizations: [try LogRecord(position: forget, bytes: bytes)])
        }
        #expect(try follower.eventStore.head() == before)
        #expect(try follower.eventStore.pendingRedactions().isEmpty)

        // A pending authorization, then a different record at its position: refused there.
        let authorization = try #require(try leader.eventStore.record(at: forget))
        try follower.eventStore.appendRecords([redacted], authorizations: [authorization])
        #expect(try follower.eventStore.pendingRedactions() == [authorization])
        // Another history from there: the same records, then another redaction record at `forget`.
        let forged = try ActivityStore(path: dir + "/forged", options: testOptions())
        try Self.follow(forged, from: leader, through: forget - 1, batch: 100)
        try forged.eventStore.write { batch in try batch.redact(PositionRanges([1]), context: [], at: at(99)) }
        let contradicted = #expect(throws: EventLogError.self) {
            try follower.eventStore.appendRecords(try forged.eventStore.records(after: redacted.position, limit: Int(forget - redacted.position)))
        }
        #expect(contradicted?.code == .diverged && contradicted?.position == forget, "\(String(describing: contradicted))")
        #expect(try follower.eventStore.pendingRedactions() == [authorization])

        // Without its pending authorization, the redacted record is tampering to verify.
        try follower.eventStore.environment.write { txn in
            let meta: Database<String, [UInt8]> = try txn.openDatabase("meta")
            #expect(try meta.delete("pendingRedaction:" + String(format: "%020llu", forget), in: txn))
        }
        let tampered = try follower.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(tampered.firstProblem?.kind == .unauthorizedRedaction && tampered.firstProblem?.position == redacted.position)
        let python = try Self.independentReader(dir + "/follower")
        #expect(python.status != 0 && python.output.contains("position \(redacted.position): unauthorizedRedaction"), "\(python.output)")
    }
}
