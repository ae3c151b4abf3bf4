import EventLog
import Foundation
import Testing
@testable import ActivityDomain

/// The event the executor hands to the projections (``DecodedEventCache/expect(_:payload:)``)
/// is a shortcut only: it is taken for the very bytes it was encoded to, and
/// any other event is decoded from its own bytes.
@Suite("Decoded event cache: the event being appended")
struct DecodedEventCacheTests {
    /// Two recorded `itemsIndexed` events of a real store: a, then b.
    static func recordedPair() throws -> (a: RecordedEvent, b: RecordedEvent) {
        var events: [RecordedEvent] = []
        try withStore { store in
            try store.indexSearchableItems([makeItem("a", title: "first")])
            try store.indexSearchableItems([makeItem("b", title: "second")])
            events = try store.eventStore.events().filter { $0.type == SpotlightEventCatalog.itemsIndexed }
        }
        try #require(events.count == 2)
        return (events[0], events[1])
    }

    static func identifiers(_ event: SpotlightEvent?) -> [String] {
        guard case .itemsIndexed(let m)? = event else { return [] }
        return m.items.map(\.item.uniqueIdentifier)
    }

    /// An event that a decode of real bytes never gives: seen only when the shortcut is taken.
    static let standIn: SpotlightEvent = {
        var message = Activitylog_V1_SearchableItemsIndexed()
        var item = Activitylog_V1_IndexedItem()
        item.item.uniqueIdentifier = "stand-in"
        message.items = [item]
        return .itemsIndexed(message)
    }()

    @Test("an event expected for other bytes is not handed over: the recorded bytes are decoded")
    func otherBytesAreDecoded() throws {
        let (a, b) = try Self.recordedPair()
        let cache = DecodedEventCache()
        cache.expect(Self.standIn, payload: a.payload)
        #expect(Self.identifiers(try cache.spotlightEvent(b, keep: false)) == ["b"])
        // Forgotten once another event came: a's own bytes are decoded.
        #expect(Self.identifiers(try cache.spotlightEvent(a, keep: false)) == ["a"])
    }

    @Test("an event expected for the same bytes is handed over, to the next projection too")
    func sameBytesAreHandedOver() throws {
        let (a, _) = try Self.recordedPair()
        let cache = DecodedEventCache()
        cache.expect(Self.standIn, payload: a.payload)
        #expect(Self.identifiers(try cache.spotlightEvent(a, keep: true)) == ["stand-in"])
        #expect(Self.identifiers(try cache.spotlightEvent(a, keep: false)) == ["stand-in"])
        // Handed over once: the next read decodes.
        #expect(Self.identifiers(try cache.spotlightEvent(a, keep: false)) == ["a"])
    }
}
