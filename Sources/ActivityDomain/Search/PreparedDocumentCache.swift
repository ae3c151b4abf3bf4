import Foundation
import LMDB
import TextIndex

/// Documents of the keyword index tokenized ahead of their write
/// transaction, by (kind, identifier): the façade fills it before a write
/// (on every core, outside the writer's transaction), and the projection's
/// writer takes the analysis from it instead of tokenizing on the single
/// writer thread.
///
/// ```swift
/// let keys = cache.insert(prepared)        // before the write
/// try eventStore.write { … }               // the writer calls cache.document(kind:identifier:)
/// cache.remove(keys)                       // after it, whatever happened
/// ```
///
/// It is only a hint, never a source of truth: the writer takes an entry's
/// document whole only when the event records, byte for byte, the item the
/// document was derived from (``Entry/recordedItem``), and otherwise reuses
/// its analysis only when its text fields equal, byte for byte, those of the
/// document it derived from the event (``TextIndexWriter/upsert(_:reusing:)``),
/// so what is written is the same with or without it, with a stale entry,
/// or with another writer's entry for the same identifier. Bounded: past
/// ``capacity`` entries, documents are not cached and the writer tokenizes
/// them itself.
///
/// `@unchecked Sendable`: every stored property is either immutable or
/// read and written only while `lock` is held.
final class PreparedDocumentCache: @unchecked Sendable {
    /// By bytes: identifiers that differ in one byte are two documents.
    struct Key: Hashable, Sendable {
        var kind: Name
        var identifier: Name

        init(kind: String, identifier: String) {
            self.kind = Name(kind)
            self.identifier = Name(identifier)
        }
    }

    /// A document analyzed ahead, and what it was derived from.
    struct Entry: Sendable {
        var prepared: PreparedDocument
        /// The item's bytes as a `searchableItems.indexed` event records
        /// them when the guess was right (``SearchableItem/recorded(defaultExpiration:)``):
        /// `prepared.document` is what ``SearchDocuments/item(_:)`` derives
        /// from them, so an event holding these very bytes needs no
        /// derivation or comparison of its own. Nil: compare the text.
        var recordedItem: [UInt8]?

        init(_ prepared: PreparedDocument, recordedItem: [UInt8]? = nil) {
            self.prepared = prepared
            self.recordedItem = recordedItem
        }
    }

    /// At most this many documents are held (a few kilobytes each).
    let capacity: Int
    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    /// For tests: how many lookups found an entry, and how many did not;
    /// how many entries a writer took whole (``takenWhole()``).
    private var hitCount = 0
    private var missCount = 0
    private var wholeCount = 0

    init(capacity: Int = 8192) {
        self.capacity = capacity
    }

    /// Stores `entries` (replacing entries of the same identity) while
    /// there is room; returns the keys it stored, for ``remove(_:)``.
    func insert(_ new: [Entry]) -> [Key] {
        lock.lock()
        defer { lock.unlock() }
        var stored: [Key] = []
        stored.reserveCapacity(new.count)
        for entry in new {
            let key = Key(kind: entry.prepared.document.kind, identifier: entry.prepared.document.identifier)
            guard entries.count < capacity || entries[key] != nil else { break }
            entries[key] = entry
            stored.append(key)
        }
        return stored
    }

    /// Stores documents without what they were derived from (their text is compared).
    func insert(_ documents: [PreparedDocument]) -> [Key] {
        insert(documents.map { Entry($0) })
    }

    /// The entry prepared for this identity, if any (left in place: a
    /// write that runs again after the map grows finds it again).
    func entry(kind: String, identifier: String) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        let found = entries[Key(kind: kind, identifier: identifier)]
        if found == nil { missCount += 1 } else { hitCount += 1 }
        return found
    }

    /// Counts an entry a writer took whole (for tests).
    func takenWhole() {
        lock.lock()
        wholeCount += 1
        lock.unlock()
    }

    /// Forgets these entries (an entry another writer stored under the same
    /// key goes too: that writer then tokenizes on the write path, nothing worse).
    func remove(_ keys: [Key]) {
        guard !keys.isEmpty else { return }
        lock.lock()
        defer { lock.unlock() }
        for key in keys { entries[key] = nil }
    }

    /// Entries held, lookups that found one, lookups that did not, entries taken whole.
    var counts: (entries: Int, hits: Int, misses: Int, whole: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (entries.count, hitCount, missCount, wholeCount)
    }
}
