import EventLog
import Foundation
import LMDB
import Testing
@testable import ActivityDomain

/// Forgetting a user in a compressed log (`Docs/LogFormat.md`,
/// "Dictionaries"): no dictionary holds what one user alone wrote, and after
/// `forget` and `compact` no byte of the user's text is in any file.
@Suite("Forgetting a user in a compressed log")
struct ForgetCompressedTests {
    static let marker = "ZQXALICEONLY"

    /// `count` items of `user`, in words every user writes, with `own` in each.
    static func fill(_ store: ActivityStore, user: String, own: String, count: Int, start: Double) throws {
        let words = ["coffee", "latte", "order", "beans", "espresso", "shipped", "roast", "cup", "milk", "sugar"]
        let items = (0..<count).map { n -> SearchableItem in
            var item = SearchableItem(uniqueIdentifier: "item-\(n)", domainIdentifier: "orders")
            item.attributeSet.title = "\(words[n % 10]) \(words[(n * 3) % 10]) \(own) order \(n)"
            item.attributeSet.contentDescription = (0..<30).map { words[($0 * 7 + n) % 10] }.joined(separator: " ") + " \(own)"
            return item
        }
        for chunk in stride(from: 0, to: count, by: 20) {
            try store.user(user).indexSearchableItems(Array(items[chunk..<min(chunk + 20, count)]), at: at(start + Double(chunk)))
        }
    }

    static func fileHolds(_ path: String, _ text: String) throws -> Bool {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.range(of: Data(text.utf8)) != nil
    }

    @Test("the dictionary never holds one user's text; after forget and compact no file holds it, and the log verifies")
    func forgetAndCompact() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = testOptions()
        options.store.dictionaryTrainingBytes = nil
        do {
            let store = try ActivityStore(path: path, options: options)
            try Self.fill(store, user: "alice", own: Self.marker, count: 200, start: 1)
            for user in ["bob", "carol", "dave"] { try Self.fill(store, user: user, own: "", count: 200, start: 1_000) }
            let id = try #require(try store.eventStore.trainDictionary())
            let dictionary = try #require(try store.eventStore.dictionary(id))
            #expect(!dictionary.contains(subsequence: Array(Self.marker.utf8)))
            #expect(dictionary.contains(subsequence: Array("espresso".utf8)), "shared words are in it")
            // Written with the dictionary: alice's text is in the log, compressed.
            try Self.fill(store, user: "alice", own: Self.marker, count: 40, start: 2_000)
            let head = try store.head()
            let last = try #require(try store.eventStore.record(at: head))
            #expect(last.isCompressed && last.dictionaryID == id)
            #expect(try last.payload.contains(subsequence: Array(Self.marker.utf8)))
            #expect(try store.user("alice").items().count == 200)
            try store.forgetUser("alice", at: at(3_000))
            #expect(try store.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload).isValid)
            store.close()
        }
        let report = try ActivityStore.compact(path: path, options: options)
        #expect(report.records.dictionariesRemoved.contains(1) || report.records.dictionary != nil)
        for file in [path + "/data.mdb", path + "/index/data.mdb"] {
            #expect(try !Self.fileHolds(file, Self.marker), "\(file)")
            #expect(try !Self.fileHolds(file, "ALICEONL"), "\(file)")
        }
        let reopened = try ActivityStore.open(path: path, options: options)
        #expect(try reopened.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload).isValid)
        #expect(try reopened.eventStore.verifyViews(full: true).isEqual)
        #expect(try reopened.user("bob").items().count == 200)
        #expect(try reopened.user("alice").items().isEmpty)
        let size = try reopened.eventStore.logSize()
        #expect(size.compressedRecords > 0)
        #expect(size.storedBytes < size.rawBytes / 2, "\(size)")
        for event in try reopened.eventStore.events() {
            #expect(!event.payload.contains(subsequence: Array(Self.marker.utf8)), "position \(event.position)")
        }
    }
}
