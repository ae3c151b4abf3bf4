import EventLog
import Foundation
import TextIndex

/// The Core Spotlight event last decoded in a write transaction, shared by
/// the projections of one ``ActivityViews``, so that a payload is decoded
/// once, not once per projection: the item store (applied first) decodes
/// `searchableItems.indexed` with its 500 items, and the keyword index
/// takes the decoded event from here. A rebuild also puts here the events
/// it decoded ahead of its writer, on another thread, with their items'
/// documents tokenized (``ActivityViews/prepare(_:)``), and the command
/// executor the event it is appending (``expect(_:payload:)``), which it
/// just encoded: decoding those bytes again would only give it back.
///
/// ```swift
/// let event = try decoded.spotlightEvent(recorded, keep: true)   // decodes, or returns what was decoded
/// ```
///
/// Only a shortcut: an entry is used only for the same recorded event
/// (position, type, schema version, the same payload bytes, redaction), and
/// decoding and tokenizing are pure functions of those, so what a
/// projection writes is the same with or without it (a projection rebuilt
/// alone simply decodes for itself).
///
/// `@unchecked Sendable`: every stored property is read and written only
/// while `lock` is held.
final class DecodedEventCache: @unchecked Sendable {
    /// A recorded event decoded, with the documents of the items it indexes
    /// when they were prepared ahead.
    struct Entry: Sendable {
        let recorded: RecordedEvent
        let event: SpotlightEvent
        /// For `itemsIndexed`, its items' documents analyzed, in order
        /// (``KeywordIndexProjection/itemDocuments(_:in:)``). Nil when not
        /// prepared, or when some item's document is invalid (the writer
        /// then makes them itself, and reports that one).
        let documents: [PreparedDocument]?
    }

    private let lock = NSLock()
    private var last: Entry?
    /// Events a rebuild prepared ahead of its writer (``insert(_:)``), by position.
    private var ahead: [Position: Entry] = [:]
    /// The event being appended (``expect(_:payload:)``), with the bytes it was encoded to.
    private var appending: (event: SpotlightEvent, payload: [UInt8])?

    init() {}

    /// Keeps events prepared ahead of the write that applies them, until
    /// ``remove(_:)``.
    func insert(_ entries: [Entry]) {
        lock.lock()
        defer { lock.unlock() }
        for entry in entries { ahead[entry.recorded.position] = entry }
    }

    /// The event the executor is about to append, encoded as `payload`:
    /// the next ``entry(_:keep:)`` for a recorded event of the same type and
    /// these very bytes takes `event` instead of decoding them (a Protocol
    /// Buffers message decodes to the message that encoded it: the schema has
    /// no maps and the message no unknown fields). Any other event forgets it.
    func expect(_ event: SpotlightEvent, payload: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        appending = (event, payload)
    }

    /// Forgets the events prepared ahead at these positions.
    func remove(_ positions: [Position]) {
        lock.lock()
        defer { lock.unlock() }
        for position in positions { ahead[position] = nil }
    }

    /// The Core Spotlight event `recorded` holds (``SpotlightEvent/init(_:)``),
    /// decoded at most once for all projections. With `keep`, the decoded
    /// event stays for the next projection; without, it is handed over and
    /// forgotten (the last projection to read it).
    func spotlightEvent(_ recorded: RecordedEvent, keep: Bool) throws -> SpotlightEvent? {
        try entry(recorded, keep: keep)?.event
    }

    /// ``spotlightEvent(_:keep:)`` with what was prepared of it, if anything.
    func entry(_ recorded: RecordedEvent, keep: Bool) throws -> Entry? {
        lock.lock()
        if let last, Self.same(last.recorded, recorded) {
            if !keep { self.last = nil }
            lock.unlock()
            return last
        }
        last = nil
        let prepared = ahead[recorded.position]
        let appended = appending
        appending = nil
        lock.unlock()
        // Both shortcuts compare the bytes rather than assume them.
        let found: Entry
        if let appended, appended.event.type == recorded.type, !recorded.isRedacted,
           recorded.schemaVersion == SpotlightEventCatalog.schemaVersion, Self.sameBytes(appended.payload, recorded.payload) {
            found = Entry(recorded: recorded, event: appended.event, documents: nil)
        } else if let prepared, Self.same(prepared.recorded, recorded) {
            // Kept with the writer's own event: the next projection's check is then by identity.
            found = Entry(recorded: recorded, event: prepared.event, documents: prepared.documents)
        } else {
            guard let decoded = try SpotlightEvent(recorded) else { return nil }
            found = Entry(recorded: recorded, event: decoded, documents: nil)
        }
        if keep {
            lock.lock()
            last = found
            lock.unlock()
        }
        return found
    }

    /// The same recorded event: decoding is a function of these fields.
    private static func same(_ a: RecordedEvent, _ b: RecordedEvent) -> Bool {
        a.position == b.position && a.type == b.type && a.schemaVersion == b.schemaVersion
            && a.isRedacted == b.isRedacted && a.redactedBy == b.redactedBy
            && sameBytes(a.payload, b.payload)
    }

    /// `memcmp`: `Array.==` compares element by element, 6 % of a rebuild's writer.
    private static func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                guard x.count == y.count else { return false }
                guard let p = x.baseAddress, let q = y.baseAddress, p != q else { return true }
                return memcmp(p, q, x.count) == 0
            }
        }
    }
}
