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
    init(items: [SearchableItem], cache: PreparedDocumentCache, queue: DispatchQueue = .global(qos: .userInitiated)) {
        self.cache = cache
        // The event lists items by identifier (UTF-8 byte order): start from its end.
        let ordered = items.sorted { utf8Less($1.uniqueIdentifier, $0.uniqueIdentifier) }
        keys = ordered.map { PreparedDocumentCache.Key(kind: SearchDocuments.itemKind, identifier: $0.uniqueIdentifier) }
        queue.async(group: group) { [self] in
            var tokenizer = Tokenizer()
            for item in ordered {
                guard !isCancelled else { return }
                // The executor's own derivation: the normalized item, as the event holds it.
                // An invalid item is left to the command to reject.
                if let doc = try? PreparedDocument(SearchDocuments.item(item.normalized.proto), tokenizer: &tokenizer) {
                    if cache.insert([doc]).isEmpty { return }   // full
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
