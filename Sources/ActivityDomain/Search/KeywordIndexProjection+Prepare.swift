import Dispatch
import Foundation
import TextIndex

extension KeywordIndexProjection {
    /// Below this many documents, preparing runs on the calling thread only:
    /// handing work to another core costs more than it saves.
    static let parallelPreparationThreshold = 64

    /// Tokenizes, before the write, the documents that `commands` will most
    /// likely upsert (each replaced item, in its last state in `commands`),
    /// split over the machine's cores, and leaves them in
    /// ``preparedDocuments`` for the writer. Returns the keys to remove once
    /// the write is over.
    ///
    /// A guess, not a decision: updates (`isUpdate`) are merged with stored
    /// state inside the transaction and are not prepared; a guess that turns
    /// out wrong (the item changed in between, a later command of the batch
    /// merged into it) is ignored by the writer, which tokenizes then.
    func prepareAhead(_ commands: [ActivityCommand.Timed]) -> [PreparedDocumentCache.Key] {
        var found: [SearchableItem] = []
        var position: [String: Int] = [:]
        for timed in commands {
            guard case .indexSearchableItems(let given) = timed.command else { continue }
            for item in given where !item.isUpdate {
                if let k = position[item.uniqueIdentifier] {
                    found[k] = item
                } else {
                    position[item.uniqueIdentifier] = found.count
                    found.append(item)
                }
            }
        }
        let items = found
        guard !items.isEmpty else { return [] }
        let cache = preparedDocuments
        let chunks = items.count < Self.parallelPreparationThreshold
            ? 1 : max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        let chunkSize = (items.count + chunks - 1) / chunks
        // Each chunk stores its documents in the (lock-protected) cache itself.
        let prepareChunk: @Sendable (Int) -> Void = { chunk in
            var tokenizer = Tokenizer()
            let range = (chunk * chunkSize)..<min(items.count, (chunk + 1) * chunkSize)
            var prepared: [PreparedDocument] = []
            prepared.reserveCapacity(range.count)
            for item in items[range] {
                // The executor's own derivation: normalized item, as an event holds it.
                // An invalid item is left to the command to reject.
                if let doc = try? PreparedDocument(SearchDocuments.item(item.normalized.proto), tokenizer: &tokenizer) {
                    prepared.append(doc)
                }
            }
            _ = cache.insert(prepared)
        }
        if chunks == 1 {
            prepareChunk(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: chunks, execute: prepareChunk)
        }
        return items.map { PreparedDocumentCache.Key(kind: SearchDocuments.itemKind, identifier: $0.uniqueIdentifier) }
    }
}
