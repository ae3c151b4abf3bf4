import Dispatch
import Foundation
import TextIndex

/// Item documents tokenized on another thread *while* the write transaction
/// runs: the worker prepares the batch's documents in the reverse of the
/// order the event will list them (identifiers by UTF-8 bytes), the
/// projection's writer takes them from the front, tokenizing itself those
/// not ready yet, and the two meet in the middle. Nothing waits for the
/// worker except ``finish()``.
///
/// ```swift
/// let preparation = DocumentPreparation(items: replacedItems, cache: cache)   // starts the worker
/// try eventStore.write { … }                                                  // the writer reads the cache
/// preparation.finish()                                                        // stops it, forgets its entries
/// ```
///
/// `@unchecked Sendable`: `cancelled` is read and written only while `lock`
/// is held; the other stored properties are immutable.
final class DocumentPreparation: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    private let group = DispatchGroup()
    private let keys: [PreparedDocumentCache.Key]
    private let cache: PreparedDocumentCache

    /// Starts preparing `items` (distinct identifiers) on `queue` (a serial
    /// one runs the preparations it is given one after another).
    init(items: [(item: SearchableItem, time: Date)], cache: PreparedDocumentCache,
         queue: DispatchQueue = .global(qos: .userInitiated)) {
        self.cache = cache
        // The event lists items by identifier (UTF-8 byte order): start from its end.
        let ordered = items.sorted { utf8Less($1.item.uniqueIdentifier, $0.item.uniqueIdentifier) }
        keys = ordered.map { PreparedDocumentCache.Key(kind: SearchDocuments.itemKind, identifier: $0.item.uniqueIdentifier) }
        queue.async(group: group) { [self] in
            var tokenizer = Tokenizer()
            for (item, time) in ordered {
                guard !isCancelled else { return }
                if let entry = KeywordIndexProjection.prepare(item, at: time, tokenizer: &tokenizer) {
                    if cache.insert([entry]).isEmpty { return }   // full
                }
            }
        }
    }

    private var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    /// Stops the worker (after the document it is on), waits for it, and
    /// removes what it stored.
    func finish() {
        lock.lock()
        cancelled = true
        lock.unlock()
        group.wait()
        cache.remove(keys)
    }
}
