import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

/// The time tests start at; commands state their own times relative to it.
let t0 = ISO8601Time.date(from: "2026-11-22T10:00:00Z")!

func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

let viewOrder = "com.example.app.viewOrder"
let editOrder = "com.example.app.editOrder"

/// Options for tests: no fsync (the tests are about rules, not durability),
/// a small first map so that growth happens, and a clock fixed at `t0`.
func testOptions(handoffLimit: Int = 3072) -> ActivityStoreOptions {
    var options = ActivityStoreOptions()
    options.store.durability = .noSync
    // The index is never noSync: noMetaSync is the fastest it takes.
    options.store.indexDurability = .noMetaSync
    options.store.initialMapSize = 1 << 20
    options.store.clock = { t0 }
    options.handoffUserInfoLimit = handoffLimit
    return options
}

extension ActivityStore {
    /// Runs `body` with the keyword index once it has applied everything
    /// written so far, a read transaction of the index and one of the log
    /// (where item documents' content is read: `contentIn:`).
    ///
    /// The wait is a hang guard, not a speed check: a debug build indexing
    /// 20,000 documents beside the whole suite on two cores takes its time.
    func readIndex<R>(_ body: (TextIndex, _ index: ReadTransaction, _ log: ReadTransaction) throws -> R) throws -> R {
        try eventStore.readIndex(after: try head(), timeout: .seconds(600)) { indexTxn, logTxn in try body(indexViews.search.index, indexTxn, logTxn) }
    }
}

/// What a run of random commands came to: how many were accepted, and how
/// many each rule rejected. The random generators mean to provoke
/// rejections (an ``ActivityError``); any other error fails the test, so a
/// store that failed every command could not pass for an empty one.
struct Outcomes: CustomStringConvertible {
    private(set) var accepted = 0
    private(set) var rejected: [ActivityError.Code: Int] = [:]
    var rejectedCount: Int { rejected.values.reduce(0, +) }

    /// Runs `body`, counting it accepted, or rejected when it throws an ActivityError.
    mutating func run(_ body: () throws -> Void) throws {
        do {
            try body()
            accepted += 1
        } catch let error as ActivityError {
            rejected[error.code, default: 0] += 1
        }
    }

    var description: String {
        "\(accepted) accepted, rejected: " + rejected.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}

func temporaryDirectory() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("activity-domain-tests-\(UUID().uuidString)").path
}

/// Everything the views answer, read in one transaction: what must come back
/// identical when the store is reopened.
struct ViewState: Equatable {
    var head: Position
    var declaredTypes: [String]
    var activities: [ActivityRecord]
    var current: [CurrentActivity]
    var saved: [SavedActivity]
}

extension ActivityStore {
    func viewState() throws -> ViewState {
        try eventStore.read { txn in
            ViewState(
                head: try eventStore.head(in: txn),
                declaredTypes: try views.registry.declaredTypes(in: txn),
                activities: try views.registry.allRecords(space: 0, in: txn),
                current: try views.current.all(space: 0, registry: views.registry, in: txn),
                saved: try views.saved.all(space: 0, in: txn))
        }
    }
}

/// Runs a scenario on a fresh store in a temporary directory, then reopens
/// the store and checks that the views come back identical from LMDB and
/// that the log verifies; removes the directory afterwards.
func withStore(handoffLimit: Int = 3072, _ body: (ActivityStore) throws -> Void) throws {
    let path = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let before: ViewState
    do {
        let store = try ActivityStore(path: path, options: testOptions(handoffLimit: handoffLimit))
        try body(store)
        before = try store.viewState()
    }
    let reopened = try ActivityStore(path: path, options: testOptions(handoffLimit: handoffLimit))
    #expect(try reopened.viewState() == before, "views differ after reopening")
    let report = try reopened.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
    #expect(report.isValid, "\(String(describing: report.firstProblem))")
}

/// An activity of `viewOrder` on `device` owned by `user`.
func makeActivity(_ id: String, device: String = "phone", user: String? = nil, type: String = viewOrder,
                  configure: (inout UserActivity) -> Void = { _ in }) -> UserActivity {
    var activity = UserActivity(activity: id, activityType: type, device: device, user: user)
    configure(&activity)
    return activity
}

/// Expects `body` to throw an ``ActivityError`` with `code` and to leave the log's head where it was.
func expectRejected(_ code: ActivityError.Code, by store: ActivityStore, sourceLocation: SourceLocation = #_sourceLocation,
                    _ body: () throws -> Void) throws {
    let head = try store.head()
    do {
        try body()
        Issue.record("expected \(code), but the command succeeded", sourceLocation: sourceLocation)
    } catch let error as ActivityError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    }
    #expect(try store.head() == head, "a rejected command appended events", sourceLocation: sourceLocation)
}

/// Expects the command to change nothing: no error, no event.
func expectNoChange(_ store: ActivityStore, sourceLocation: SourceLocation = #_sourceLocation,
                    _ body: () throws -> CommandResult) throws {
    let head = try store.head()
    let result = try body()
    #expect(!result.changed, sourceLocation: sourceLocation)
    #expect(try store.head() == head, sourceLocation: sourceLocation)
}
