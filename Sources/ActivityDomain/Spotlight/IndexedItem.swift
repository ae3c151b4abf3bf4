import EventLog
import Foundation

/// A searchable item as the item store holds it: the item in its final state
/// (expiration always set) and the events that wrote it.
///
/// ```swift
/// for stored in try store.items(inDomain: "orders") {
///     print(stored.item.uniqueIdentifier, stored.item.attributeSet.title ?? "", stored.item.expirationDate!)
/// }
/// ```
public struct IndexedItem: Sendable, Hashable {
    /// The item; `expirationDate` is set, `isUpdate` false.
    public var item: SearchableItem
    /// Whether the expiration is the default (one calendar month after indexing).
    public var hasDefaultExpiration: Bool
    /// The position of the event that wrote this state.
    public var position: Position
    /// That event's time.
    public var indexedAt: Date
    /// The position of the event that first added the item (a replace or merge keeps it).
    public var firstPosition: Position

    public var uniqueIdentifier: String { item.uniqueIdentifier }

    public init(item: SearchableItem, hasDefaultExpiration: Bool, position: Position, indexedAt: Date, firstPosition: Position) {
        self.item = item
        self.hasDefaultExpiration = hasDefaultExpiration
        self.position = position
        self.indexedAt = indexedAt
        self.firstPosition = firstPosition
    }

    init(proto m: Activitylog_V1_SearchableItemRecord) {
        item = SearchableItem(proto: m.item)
        hasDefaultExpiration = m.item.defaultExpiration
        position = m.position
        indexedAt = Date(microseconds: m.indexedAtMicros)
        firstPosition = m.firstPosition
    }
}
