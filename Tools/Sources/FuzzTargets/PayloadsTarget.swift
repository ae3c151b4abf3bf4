import ActivityDomain
import EventLog
import Foundation

/// An event payload as another writer (another version, another language)
/// could have logged it: the first input byte picks the event type, the
/// second its schema version, the rest is the payload. It is appended in a
/// write that is then rolled back, so every projection decodes and applies
/// it, and rendered as `eventlog log --json` does. A payload that does not
/// decode is an error, never a crash.
enum PayloadsTarget {
    static let types = (ActivityEventCatalog.types.union(SpotlightEventCatalog.types)).sorted() + ["other.unknown"]
    static let fixture = Fixture { try ActivityStore(path: Scratch.path("payloads"), options: FuzzStores.fast).filled(with: FuzzStores.searchableLines) }

    struct RolledBack: Error {}

    static func run(_ input: [UInt8]) throws {
        let store = try fixture.get()
        guard input.count >= 2 else { return }
        let event = NewEvent(type: types[Int(input[0]) % types.count], schemaVersion: UInt32(input[1] % 3),
                             payload: Array(input.dropFirst(2)), at: Date(timeIntervalSince1970: 1_795_000_000))
        do {
            try store.eventStore.write { batch in
                let recorded = try batch.append(event)
                _ = try? ActivityEventCatalog.json(of: recorded)
                try? ActivityEventCatalog.checkPayload(recorded)
                throw RolledBack()
            }
        } catch {
            // Rolled back, or refused: both fine.
        }
    }

    /// One seed for each event type: the payloads the fixture's own log holds.
    static func seeds() throws -> [[UInt8]] {
        try fixture.get().eventStore.events(from: 1).compactMap { event in
            types.firstIndex(of: event.type).map { [UInt8($0), UInt8(event.schemaVersion)] + event.payload }
        }
    }
}
