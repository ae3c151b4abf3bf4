import EventLog
import Foundation
import LMDB
import Testing
@testable import ActivityDomain

@Suite("Forgetting a user (SPEC §10)")
struct ForgetUserTests {
    static let marker = "ZQXMARKER"

    /// `user`'s activity, saved copy, item and client state, with `marker` in
    /// the title, keywords, userInfo, item text and client state.
    static func fill(_ store: ActivityStore, user: String, marker: String, start: Double) throws {
        let space = store.user(user)
        var activity = makeActivity("a1", device: "phone")
        activity.title = "Latte \(marker)title"
        activity.keywords = ["\(marker)keyword"]
        activity.userInfo = ["note": .string("\(marker)info")]
        activity.eligibleForSearch = true
        activity.persistentIdentifier = "order-42"
        try space.createActivity(activity, at: at(start))
        try space.becomeCurrent("a1", at: at(start + 1))
        var item = SearchableItem(uniqueIdentifier: "order-1", domainIdentifier: "orders")
        item.attributeSet.title = "coffee \(marker)item"
        try space.indexBatch(index: "idx", clientState: Data("\(marker)state".utf8), at: at(start + 2)) {
            $0.indexSearchableItems([item])
        }
    }

    @Test("forget: the user's events are redacted, views drop the user, the log verifies, a rebuild equals live, others read as if the user never was")
    func forget() throws {
        let path = temporaryDirectory(), alone = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: alone) }
        let store = try ActivityStore(path: path, options: testOptions())
        let reference = try ActivityStore(path: alone, options: testOptions())
        try store.declareActivityTypes([viewOrder], at: at(0))
        try reference.declareActivityTypes([viewOrder], at: at(0))
        try Self.fill(store, user: "alice", marker: Self.marker, start: 1)
        try Self.fill(store, user: "bob", marker: "bobtext", start: 10)
        try Self.fill(reference, user: "bob", marker: "bobtext", start: 10)
        let snapshot = try store.eventStore.createSnapshot()
        let result = try store.forgetUser("alice", at: at(20))
        #expect(result.redactedEvents > 0)
        #expect(result.eventTypes == [RedactionRecord.type])
        #expect(!FileManager.default.fileExists(atPath: snapshot.path), "the snapshot held alice's data")
        for event in try store.eventStore.events() {
            #expect(!event.payload.contains(subsequence: Array(Self.marker.utf8)), "position \(event.position)")
        }
        let report = try store.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        let comparison = try store.eventStore.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
        #expect(try UserSpaceIsolationTests.reads(of: store.user("bob")) == UserSpaceIsolationTests.reads(of: reference.user("bob")))
        #expect(try UserSpaceIsolationTests.reads(of: store.user("alice")) == UserSpaceIsolationTests.reads(of: reference.user("alice")))
        #expect(try !store.users().contains { $0.user == "alice" })
        // Forgetting again changes nothing; alice may come back with a new space.
        #expect(try store.forgetUser("alice", at: at(21)).positions == nil)
        try Self.fill(store, user: "alice", marker: "again", start: 30)
        #expect(try store.user("alice").items().count == 1)
        try store.forgetUser("alice", at: at(40))
        #expect(try store.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload).isValid)
        #expect(try store.eventStore.verifyViews(full: true).isEqual)
        // Time travel to a position before the forget never brings alice back.
        let travel = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: travel) }
        try store.eventStore.replay(through: 8, into: travel)
        let then = try ActivityStore(path: travel, options: testOptions())
        #expect(try then.user("alice").items().isEmpty)
        #expect(try !then.users().contains { $0.user == "alice" })
    }

    @Test("the default space cannot be forgotten; forgetUser among other commands is refused; both write nothing")
    func refused() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder], at: at(0))
            try Self.fill(store, user: "alice", marker: "x", start: 1)
            let head = try store.head()
            #expect(throws: ActivityError.self) { try store.forgetUser("", at: at(2)) }
            #expect(throws: ActivityError.self) {
                try store.write([.init(.forgetUser, user: "alice"), .init(.invalidate("a1"), user: "alice")], at: at(3))
            }
            #expect(try store.head() == head)
            #expect(throws: ActivityError.self) { try OperationDecoder().decode(#"{"op":"forgetUser"}"#) }
        }
    }

    @Test("verify reports a record flagged redacted without a covering redaction record, at its position")
    func unauthorizedRedaction() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bobs: Position
        do {
            let store = try ActivityStore(path: path, options: testOptions())
            try store.declareActivityTypes([viewOrder], at: at(0))
            try Self.fill(store, user: "alice", marker: "x", start: 1)
            try Self.fill(store, user: "bob", marker: "y", start: 10)
            bobs = try store.head()
            try store.forgetUser("alice", at: at(20))
        }
        // The last event before the forget is bob's: flag it redacted, keep or empty its payload, recompute the CRC.
        for emptied in [false, true] {
            let copy = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: copy) }
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: path + "/data.mdb", toPath: copy + "/data.mdb")
            try Environment(path: copy, options: EnvironmentOptions()).write { txn in
                let log: Database<UInt64, [UInt8]> = try txn.openDatabase("log")
                var bytes = try log.get(bobs, in: txn)!
                bytes[1] |= 1
                if emptied {
                    let t = Int(bytes[2]) << 8 | Int(bytes[3])
                    bytes = Array(bytes[0..<(84 + t)]) + [0, 0, 0, 0]
                    bytes[16] = 0; bytes[17] = 0; bytes[18] = 0; bytes[19] = 0
                }
                let crc = bytes[0..<(bytes.count - 4)].withUnsafeBytes { CRC32CForTests.checksum($0) }
                bytes.replaceSubrange((bytes.count - 4)..., with: withUnsafeBytes(of: crc.bigEndian) { Array($0) })
                try log.put(bytes, forKey: bobs, in: txn)
            }
            let report = try EventStore<ActivityViews>(path: copy, options: testOptions().store).verify()
            #expect(report.firstProblem?.position == bobs)
            #expect(report.firstProblem?.kind == (emptied ? .unauthorizedRedaction : .redactedWithPayload))
        }
    }
}

extension ForgetUserTests {
    @Test("a snapshot written while the forget ran (it appears after the forget removed the others) is never a rebuild's start: rebuilds and time travel leave alice out")
    func snapshotFromBeforeTheForget() throws {
        let path = temporaryDirectory(), aside = temporaryDirectory(), travel = temporaryDirectory()
        defer { for p in [path, aside, travel] { try? FileManager.default.removeItem(atPath: p) } }
        let store = try ActivityStore(path: path, options: testOptions())
        try store.declareActivityTypes([viewOrder], at: at(0))
        try Self.fill(store, user: "alice", marker: Self.marker, start: 1)
        try Self.fill(store, user: "bob", marker: "bobtext", start: 10)
        // Another process's snapshot of the views before the forget, renamed into place after it.
        let snapshot = try store.eventStore.createSnapshot()
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: snapshot.path, toPath: aside + "/s")
        let result = try store.forgetUser("alice", at: at(20))
        #expect(result.removedSnapshots == [snapshot.position])
        try FileManager.default.copyItem(atPath: aside + "/s", toPath: snapshot.path)
        #expect(try store.eventStore.snapshots().map(\.position) == [snapshot.position])

        let comparison = try store.eventStore.verifyViews()
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
        #expect(comparison.report.snapshot == nil, "the rebuild started from the snapshot that holds alice")
        try store.eventStore.rebuild()
        #expect(try store.user("alice").items().isEmpty)
        try store.eventStore.replay(through: snapshot.position, into: travel)
        let then = try ActivityStore(path: travel, options: testOptions())
        #expect(try then.user("alice").items().isEmpty)
        #expect(try !then.users().contains { $0.user == "alice" })
        #expect(try then.user("bob").items().count == 1)
    }

    @Test("a time travel's copy to before the forget verifies, listing the forget as a pending authorization; a record flagged by hand in it is still reported")
    func timeTravelCopyVerifies() throws {
        let path = temporaryDirectory(), travel = temporaryDirectory()
        defer { for p in [path, travel] { try? FileManager.default.removeItem(atPath: p) } }
        let before: Position
        do {
            let store = try ActivityStore(path: path, options: testOptions())
            try store.declareActivityTypes([viewOrder], at: at(0))
            try Self.fill(store, user: "alice", marker: Self.marker, start: 1)
            try Self.fill(store, user: "bob", marker: "bobtext", start: 10)
            before = try store.head()
            try store.forgetUser("alice", at: at(20))
            try store.eventStore.replay(through: before, into: travel)
        }
        let copy = try EventStore<ActivityViews>(path: travel, options: testOptions().store)
        let report = try copy.verify(payloadCheck: ActivityEventCatalog.checkPayload)
        #expect(report.isValid, "\(String(describing: report.firstProblem))")
        #expect(report.pendingRedactions.count == 1 && report.pendingRedactions[0].position > before && report.pendingRedactions[0].covers > 0,
                "\(report.pendingRedactions)")
        #expect(try copy.verifyViews(full: true).isEqual)
        // bob's last event flagged redacted by hand, payload emptied, CRC recomputed: no redactions entry covers it.
        try copy.environment.write { txn in
            let log: Database<UInt64, [UInt8]> = try txn.openDatabase("log")
            var bytes = try log.get(before, in: txn)!
            bytes[1] |= 1
            let t = Int(bytes[2]) << 8 | Int(bytes[3])
            bytes = Array(bytes[0..<(84 + t)]) + [0, 0, 0, 0]
            bytes[16] = 0; bytes[17] = 0; bytes[18] = 0; bytes[19] = 0
            let crc = bytes[0..<(bytes.count - 4)].withUnsafeBytes { CRC32CForTests.checksum($0) }
            bytes.replaceSubrange((bytes.count - 4)..., with: withUnsafeBytes(of: crc.bigEndian) { Array($0) })
            try log.put(bytes, forKey: before, in: txn)
        }
        let tampered = try copy.verify()
        #expect(tampered.firstProblem?.position == before)
        #expect(tampered.firstProblem?.kind == .unauthorizedRedaction)
    }
}

/// CRC-32C (Castagnoli), bit by bit: a second implementation for tampering tests.
enum CRC32CForTests {
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        for i in 0...(count - subsequence.count) where self[i..<(i + subsequence.count)].elementsEqual(subsequence) { return true }
        return false
    }
}
