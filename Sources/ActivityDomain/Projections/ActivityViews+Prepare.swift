import EventLog
import TextIndex

extension ActivityViews {
    /// Decodes the Core Spotlight events among `events` and analyzes the
    /// documents of the items they index, for a rebuild's writer to take
    /// instead of doing both on its own thread: they wait in the cache the
    /// item store and the keyword index share (``DecodedEventCache``), which
    /// hands them over only for the same payload bytes, so what a rebuild
    /// writes does not depend on them.
    public func prepare(_ events: [RecordedEvent]) -> PreparedEvents? {
        var entries: [DecodedEventCache.Entry] = []
        var tokenizer = Tokenizer()
        for recorded in events {
            // One that does not decode is left to the writer, which reports it.
            guard let event = try? SpotlightEvent(recorded) else { continue }
            var documents: [PreparedDocument]?
            if case .itemsIndexed(let m) = event {
                documents = try? KeywordIndexProjection.itemDocuments(m, in: recorded).map {
                    try PreparedDocument($0, tokenizer: &tokenizer)
                }
            }
            entries.append(.init(recorded: recorded, event: event, documents: documents))
        }
        guard !entries.isEmpty else { return nil }
        let cache = search.decodedEvents
        cache.insert(entries)
        let positions = entries.map(\.recorded.position)
        return PreparedEvents { cache.remove(positions) }
    }
}
