import EventLog
import Foundation
import Testing
@testable import ActivityDomain

/// SPEC §10, "however far the index lags": a forget commits to the log while
/// the index has not applied it (its indexer cut off, or not run); no
/// snapshot of the index from before the forget survives it or is taken
/// after it, and `compact` first brings the index past the forget, so that
/// no file of the store keeps a byte of the user's data.
@Suite("Forget and compact while the index lags (SPEC §10)")
struct ForgetLaggingIndexTests {
    static let marker = "ZQXLAGMARK"

    /// The store's files (relative paths) that hold `marker`, as written or as the index folds it.
    static func files(under root: String, holding marker: String) throws -> [String] {
        let needles = [Array(marker.utf8), Array(marker.lowercased().utf8)]
        var found: [String] = []
        for case let name as String in FileManager.default.enumerator(atPath: root) ?? FileManager.DirectoryEnumerator() {
            let path = (root as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            if needles.contains(where: { bytes.contains(subsequence: $0) }) { found.append(name) }
        }
        return found.sorted()
    }

    @Test("the index lags behind a forget: its snapshots go and none is taken; compact brings it past the forget, and no file keeps a byte of the user")
    func compactBringsTheIndexPastTheForget() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = testOptions()
        options.store.indexesInBackground = false   // the indexer does not follow: the index lags
        let forgetAt: Position
        do {
            let store = try ActivityStore(path: path, options: options)
            try store.declareActivityTypes([viewOrder], at: at(0))
            try ForgetUserTests.fill(store, user: "alice", marker: Self.marker, start: 1)
            try ForgetUserTests.fill(store, user: "bob", marker: "bobtext", start: 10)
            try store.eventStore.catchUpIndex()
            try store.eventStore.createSnapshot()
            #expect(try store.eventStore.snapshots(of: .index).count == 1)
            forgetAt = try #require(try store.forgetUser("alice", at: at(20)).positions?.lowerBound)
            #expect(try store.eventStore.index!.applied() < forgetAt, "the index must lag behind the forget")
            #expect(try store.eventStore.snapshots(of: .index).isEmpty, "an index snapshot holding alice survived her forget")
            // A snapshot taken now: the views' (after the forget), never the index's, which has not applied it.
            try store.eventStore.createSnapshot()
            #expect(try store.eventStore.snapshots(of: .index).isEmpty, "an index snapshot was taken before the index applied the forget")
            store.close()
        }
        // The test can fail: the lagging index's file holds alice's data.
        #expect(try Self.files(under: path, holding: Self.marker).contains { $0.hasPrefix("index/") })
        try ActivityStore.compact(path: path, options: options)
        #expect(try Self.files(under: path, holding: Self.marker) == [], "a byte of the forgotten user is left after compact")
        var reading = options
        reading.store.readOnly = true
        let store = try ActivityStore(path: path, options: reading)
        #expect(try store.eventStore.index!.applied() >= forgetAt)
        #expect(try store.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload).isValid)
    }
}
