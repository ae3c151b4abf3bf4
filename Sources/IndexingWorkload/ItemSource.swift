/// Where the items of an indexing run come from.
public enum ItemSource: Sendable, Equatable {
    /// A JSON Lines file (`.gz` accepted), streamed; its first `limit` items when given.
    case corpus(path: String, limit: Int?)
    /// ``ItemGenerator`` items.
    case generated(count: Int, seed: UInt64)
}
