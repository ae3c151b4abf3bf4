import EventLog
import Foundation

/// The Core Spotlight event last decoded in a write transaction, shared by
/// the projections of one ``ActivityViews``, so that a payload is decoded
/// once, not once per projection: the item store (applied first) decodes
/// `searchableItems.indexed` with its 500 items, and the keyword index
/// takes the decoded event from here.
///
/// ```swift
/// let event = try decoded.spotlightEvent(recorded)   // decodes, or returns what the item store decoded
/// ```
///
/// Only a shortcut: an entry is used only for the same recorded event
/// (position, type, the same payload bytes, redaction), and decoding is a
/// pure function of those, so what a projection writes is the same with or
/// without it (a projection rebuilt alone simply decodes for itself).
///
/// `@unchecked Sendable`: every stored property is read and written only
/// while `lock` is held.
final class DecodedEventCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entry: (event: RecordedEvent, decoded: SpotlightEvent)?

    init() {}

    /// The Core Spotlight event `recorded` holds (``SpotlightEvent/init(_:)``),
    /// decoded at most once for all projections. With `keep`, the decoded
    /// event stays for the next projection; without, it is handed over and
    /// forgotten (the last projection to read it).
    func spotlightEvent(_ recorded: RecordedEvent, keep: Bool) throws -> SpotlightEvent? {
        lock.lock()
        if let entry, entry.event.position == recorded.position, entry.event.type == recorded.type,
           entry.event.isRedacted == recorded.isRedacted, entry.event.redactedBy == recorded.redactedBy,
           entry.event.payload == recorded.payload {   // the same array: compared by identity first
            let decoded = entry.decoded
            if !keep { self.entry = nil }
            lock.unlock()
            return decoded
        }
        self.entry = nil
        lock.unlock()
        guard let decoded = try SpotlightEvent(recorded) else { return nil }
        if keep {
            lock.lock()
            entry = (recorded, decoded)
            lock.unlock()
        }
        return decoded
    }
}
