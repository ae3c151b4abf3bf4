import EventLog
import Foundation
import Testing
@testable import ActivityDomain

@Suite("Core Spotlight index batches with client state (SPEC §4)")
struct SpotlightBatchTests {
    @Test("a batch commits its commands with the index's new client state, atomically")
    func commit() throws {
        try withReopenedSpotlightStore { store in
            #expect(try store.fetchLastClientState(index: "orders") == nil)
            let head = try store.head()
            let results = try store.indexBatch(index: "orders", clientState: Data("cursor-1".utf8), at: at(0)) { batch in
                batch.indexSearchableItems([makeItem("a", title: "alpha"), makeItem("b", title: "bravo")])
                batch.deleteSearchableItems(withIdentifiers: ["b"])
            }
            #expect(results.map(\.operation) == ["indexSearchableItems", "deleteSearchableItems"])
            #expect(try store.fetchLastClientState(index: "orders") == Data("cursor-1".utf8))
            #expect(try store.items().map(\.uniqueIdentifier) == ["a"])
            #expect(try store.head() == head + 3)
            let committed = try #require(try store.eventStore.event(at: head + 3))
            #expect(committed.type == SpotlightEventCatalog.indexBatchCommitted)
            let json = try #require(try SpotlightEventCatalog.json(of: committed))
            #expect(json.contains("\"firstPosition\":\"\(head + 1)\""))
            // The next batch, checked against the state the first one stored.
            try store.indexBatch(index: "orders", clientState: Data("cursor-2".utf8),
                                 expectedClientState: Data("cursor-1".utf8), at: at(1)) { batch in
                batch.indexSearchableItems([makeItem("c", title: "charlie")])
            }
            #expect(try store.fetchLastClientState(index: "orders") == Data("cursor-2".utf8))
            #expect(try store.fetchLastClientState(index: "other") == nil)
            #expect(try store.clientStates() == [IndexClientState(index: "orders", clientState: Data("cursor-2".utf8))])
        }
    }

    @Test("a mismatched expected client state rejects the whole batch and writes nothing")
    func mismatch() throws {
        try withReopenedSpotlightStore { store in
            try store.indexBatch(index: "orders", clientState: Data("v1".utf8)) { batch in
                batch.indexSearchableItems([makeItem("a", title: "alpha")])
            }
            let before = try store.spotlightState()
            try expectRejected(.mismatchedClientState, by: store) {
                try store.indexBatch(index: "orders", clientState: Data("v3".utf8), expectedClientState: Data("v2".utf8)) { batch in
                    batch.indexSearchableItems([makeItem("b", title: "bravo")])
                    batch.deleteAllSearchableItems()
                }
            }
            #expect(try store.spotlightState() == before)
            // Expecting a state for an index that has none is a mismatch too.
            try expectRejected(.mismatchedClientState, by: store) {
                try store.indexBatch(index: "fresh", clientState: Data("v1".utf8), expectedClientState: Data("v0".utf8)) { _ in }
            }
            do {
                try store.indexBatch(index: "orders", clientState: Data(), expectedClientState: Data("v2".utf8)) { _ in }
            } catch let error as ActivityError {
                #expect(error.operation == "endIndexBatch" && error.field == "expectedClientState")
                #expect(error.allowed?.contains(Data("v1".utf8).base64EncodedString()) == true)
            }
            #expect(try store.spotlightState() == before)
        }
    }

    @Test("client states are at most 250 bytes")
    func clientStateLimit() throws {
        try withReopenedSpotlightStore { store in
            try expectRejected(.clientStateTooLong, by: store) {
                try store.indexBatch(index: "orders", clientState: Data(count: 251)) { batch in
                    batch.indexSearchableItems([makeItem("a")])
                }
            }
            #expect(try store.items().isEmpty)
            try store.indexBatch(index: "orders", clientState: Data(repeating: 7, count: 250)) { _ in }
            #expect(try store.fetchLastClientState(index: "orders")?.count == 250)
        }
    }

    @Test("a batch whose body throws, or whose command is rejected, writes nothing")
    func rejectedBatch() throws {
        struct Stop: Error {}
        try withReopenedSpotlightStore { store in
            let head = try store.head()
            #expect(throws: Stop.self) {
                try store.indexBatch(index: "orders", clientState: Data("1".utf8)) { batch in
                    batch.indexSearchableItems([makeItem("a")])
                    throw Stop()
                }
            }
            try expectRejected(.malformedDomainIdentifier, by: store) {
                try store.indexBatch(index: "orders", clientState: Data("1".utf8)) { batch in
                    batch.indexSearchableItems([makeItem("a")])
                    batch.deleteSearchableItems(withDomainIdentifiers: ["bad..domain"])
                }
            }
            #expect(try store.head() == head)
            #expect(try store.fetchLastClientState(index: "orders") == nil)
            #expect(try store.items().isEmpty)
        }
    }

    @Test("batch markers in a write: they must pair up within one write")
    func markers() throws {
        try withReopenedSpotlightStore { store in
            try expectRejected(.invalidIndexBatch, by: store) {
                try store.write([.indexSearchableItems([makeItem("a")]), .endIndexBatch(index: "i", clientState: Data(), expectedClientState: nil)])
            }
            do {
                try store.write([.beginIndexBatch(index: "i"), .indexSearchableItems([makeItem("a")])])
                Issue.record("an open batch was committed")
            } catch let error as ActivityError {
                #expect(error.code == .invalidIndexBatch && error.commandIndex == 0)
            }
            try expectRejected(.invalidIndexBatch, by: store) {
                try store.write([.beginIndexBatch(index: "i"), .beginIndexBatch(index: "i")])
            }
            try expectRejected(.identifierEmpty, by: store) { try store.write([.beginIndexBatch(index: "")]) }
            #expect(try store.items().isEmpty)
            // Two indexes' batches, interleaved, in one write; delete-all in between forgets the older state.
            try store.write([
                .beginIndexBatch(index: "i"), .beginIndexBatch(index: "j"),
                .indexSearchableItems([makeItem("a")]),
                .endIndexBatch(index: "j", clientState: Data("j1".utf8), expectedClientState: nil),
                .deleteAllSearchableItems,
                .indexSearchableItems([makeItem("b")]),
                .endIndexBatch(index: "i", clientState: Data("i1".utf8), expectedClientState: nil),
            ], at: at(0))
            #expect(try store.clientStates() == [IndexClientState(index: "i", clientState: Data("i1".utf8))])
            #expect(try store.items().map(\.uniqueIdentifier) == ["b"])
        }
    }
}
