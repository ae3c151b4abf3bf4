import Dispatch
import Foundation
import LMDB
import TextIndex

extension KeywordIndexProjection {
    /// Below this many documents, preparing runs on the calling thread only:
    /// handing work to another core costs more than it saves.
    static let parallelPreparationThreshold = 64

    /// Starts tokenizing, beside the write, the documents that `commands`
    /// will most likely upsert (each replaced item, in its last state in
    /// `commands`); nil when there are too few to be worth a thread.
    func prepareAlongside(_ commands: [ActivityCommand.Timed], at batchTime: Date) -> DocumentPreparation? {
        let items = Self.replacedItems(commands, at: batchTime)
        guard items.count >= Self.parallelPreparationThreshold else { return nil }
        return DocumentPreparation(items: items, cache: preparedDocuments)
    }

    /// Each item `commands` replace (not merge), in its last state there,
    /// with the time of the command that replaces it (its own, else `batchTime`).
    static func replacedItems(_ commands: [ActivityCommand.Timed], at batchTime: Date) -> [(item: SearchableItem, time: Date)] {
        var found: [(item: SearchableItem, time: Date)] = []
        var position: [Name: Int] = [:]
        for timed in commands {
            guard case .indexSearchableItems(let given) = timed.command else { continue }
            for item in given where !item.isUpdate {
                if let k = position[Name(item.uniqueIdentifier)] {
                    found[k] = (item, timed.at ?? batchTime)
                } else {
                    position[Name(item.uniqueIdentifier)] = found.count
                    found.append((item, timed.at ?? batchTime))
                }
            }
        }
        return found
    }

    /// The document of `item` replacing its identifier at `time`, derived
    /// as the projection derives it from the event the executor records
    /// (``SearchableItem/replacement(at:)``), with those recorded bytes; nil
    /// for an invalid item (left to the command to reject).
    static func prepare(_ item: SearchableItem, at time: Date, tokenizer: inout Tokenizer) -> PreparedDocumentCache.Entry? {
        let (replacement, defaultExpiration) = item.normalized.replacement(at: time)
        let recorded = replacement.recorded(defaultExpiration: defaultExpiration)
        guard let prepared = try? PreparedDocument(SearchDocuments.item(recorded), tokenizer: &tokenizer) else { return nil }
        return PreparedDocumentCache.Entry(prepared, recordedItem: try? recorded.serializedBytes())
    }

    /// Tokenizes, before the write and split over the machine's cores,
    /// the documents that `commands` will most likely upsert, and leaves
    /// them in ``preparedDocuments``; returns the keys to remove once the
    /// write is over. The synchronous form of ``prepareAlongside(_:)``: the
    /// writer then finds every replaced item prepared (tests use it for
    /// that; measured on the corpus it is slower than tokenizing in the
    /// writer, since nothing overlaps the write).
    ///
    /// A guess, not a decision: updates (`isUpdate`) are merged with stored
    /// state inside the transaction and are not prepared; a guess that turns
    /// out wrong (the item changed in between, a later command of the batch
    /// merged into it) is ignored by the writer, which tokenizes then.
    func prepareAhead(_ commands: [ActivityCommand.Timed], at batchTime: Date) -> [PreparedDocumentCache.Key] {
        let items = Self.replacedItems(commands, at: batchTime)
        guard !items.isEmpty else { return [] }
        let cache = preparedDocuments
        let chunks = items.count < Self.parallelPreparationThreshold
            ? 1 : max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        let chunkSize = (items.count + chunks - 1) / chunks
        // Each chunk stores its documents in the (lock-protected) cache itself.
        let prepareChunk: @Sendable (Int) -> Void = { chunk in
            var tokenizer = Tokenizer()
            let range = (chunk * chunkSize)..<min(items.count, (chunk + 1) * chunkSize)
            var prepared: [PreparedDocumentCache.Entry] = []
            prepared.reserveCapacity(range.count)
            for (item, time) in items[range] {
                if let entry = Self.prepare(item, at: time, tokenizer: &tokenizer) { prepared.append(entry) }
            }
            _ = cache.insert(prepared)
        }
        if chunks == 1 {
            prepareChunk(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: chunks, execute: prepareChunk)
        }
        return items.map { PreparedDocumentCache.Key(kind: SearchDocuments.itemKind, identifier: $0.item.uniqueIdentifier) }
    }
}
