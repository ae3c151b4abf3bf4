import EventLog
import Foundation
import Testing
import TextIndex
@testable import ActivityDomain

/// Reads a page needs, in one read transaction.
@Suite("Reads in one transaction")
struct SpaceReaderTests {
    @Test("searchDocuments gives each hit its item or saved activity; items(withIdentifiers:) in the order asked")
    func hitsWithDocuments() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ActivityStore.open(path: path, options: testOptions())
        defer { store.close() }
        try store.declareActivityTypes([viewOrder])
        let alice = store.user("alice"), bob = store.user("bob")
        try alice.indexSearchableItems((0..<30).map { makeItem("i\($0)", title: "Oat latte \($0)") })
        try alice.createActivity(makeActivity("a1") { $0.eligibleForSearch = true; $0.title = "Latte to go"; $0.persistentIdentifier = "order-1" })
        try alice.becomeCurrent("a1")
        try bob.indexSearchableItems([makeItem("i1", title: "Bob's latte")])
        let now = at(60)
        let head = try store.head()   // the index follows the log: read after every write above
        let hits = try alice.search("latte", now: now, limit: 40, after: head)
        let results = try alice.searchDocuments("latte", now: now, limit: 40, after: head)
        #expect(results.map(\.hit) == hits)
        #expect(hits.count == 31)
        for result in results {
            switch result.document {
            case .item(let stored): #expect(stored == (try alice.item(result.hit.identifier)))
            case .activity(let saved): #expect(saved == (try alice.savedActivity(forKey: result.hit.identifier)) && saved.key == "order-1")
            }
        }
        let matches = try alice.queryDocuments(#"title == "oat*"c"#, now: now, after: head)
        #expect(matches.map(\.hit) == (try alice.query(#"title == "oat*"c"#, now: now, after: head)) && matches.count == 30)
        let picked = try alice.items(withIdentifiers: ["i7", "missing", "i2", "i7"])
        #expect(picked.map(\.uniqueIdentifier) == ["i7", "i2", "i7"])
        #expect(try bob.items(withIdentifiers: ["i1", "i2"]).map { $0.item.attributeSet.title } == ["Bob's latte"])
        #expect(try store.user("carol").items(withIdentifiers: ["i1"]).isEmpty)
    }

    @Test("reading { } sees one commit of the log and one of the index: reads before and after another thread's write agree")
    func oneTransaction() throws {
        let path = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = testOptions()
        options.store.initialMapSize = 64 << 20   // the write during the read must not need to grow the map
        let store = try ActivityStore.open(path: path, options: options)
        defer { store.close() }
        let alice = store.user("alice")
        try alice.indexSearchableItems([makeItem("i0", title: "Latte")])
        let (before, after, position, seenAfter) = try alice.read(after: try store.head()) { space in
            let before = try space.items().count
            let hitsBefore = try space.search("latte", now: at(60)).count
            // Another thread commits while this read is open.
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? alice.indexSearchableItems([makeItem("i1", title: "Latte")])
                done.signal()
            }
            done.wait()
            #expect(try space.search("latte", now: at(60)).count == hitsBefore)
            return (before, try space.items().count, space.position, try space.searchDocuments("latte", now: at(60)).count)
        }
        #expect(before == 1 && after == 1 && seenAfter == 1)
        #expect(try store.head() > position, "the other thread's write committed during the read")
        #expect(try alice.items().count == 2)
    }
}
