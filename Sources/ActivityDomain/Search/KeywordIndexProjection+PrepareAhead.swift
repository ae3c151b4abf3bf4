import EventLog
import Foundation
import TextIndex

extension KeywordIndexProjection {
    /// In a rebuild, tokenizes the items an `itemsIndexed` event indexes,
    /// on the engine's reading thread, ahead of the writer, and leaves them
    /// in ``preparedDocuments``, where the writer looks for them (and uses
    /// one only when it equals what it derives from the event): the second
    /// core tokenizes while the writer writes postings. Returns what removes
    /// them once the event was applied.
    public func prepareAhead(_ recorded: RecordedEvent) -> (@Sendable () -> Void)? {
        guard recorded.type == SpotlightEventCatalog.itemsIndexed, !recorded.isRedacted,
              case .itemsIndexed(let message)? = try? SpotlightEvent(recorded), !message.items.isEmpty else { return nil }
        var tokenizer = Tokenizer()
        var prepared: [PreparedDocument] = []
        prepared.reserveCapacity(message.items.count)
        for indexed in message.items {
            // What the writer derives from the event; an invalid document is left to it.
            if let doc = try? PreparedDocument(SearchDocuments.item(indexed.item), tokenizer: &tokenizer) {
                prepared.append(doc)
            }
        }
        let keys = preparedDocuments.insert(prepared)
        guard !keys.isEmpty else { return nil }
        let cache = preparedDocuments
        return { cache.remove(keys) }
    }
}
