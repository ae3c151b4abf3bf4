import EventLog

/// The user and items of a `searchableItems.indexed` event, read by a walk
/// of its payload's bytes (``ItemSlices``, ``ItemWire``) rather than by
/// decoding the whole message: what the keyword index's preparing threads
/// and the item store's rebuild read for every such event. The decoder
/// spends about 18 K instructions an item; the walk about half.
///
/// It gives exactly what the decoded event gives (the user, and each item
/// with where its bytes are), or nil when the bytes are not in the shape
/// the walk takes: the event's own fields other than items (1), dropped
/// updates (2, UTF-8) and the user (15), an item the walk refuses, a
/// redacted payload, another schema version or another event. Then the
/// caller decodes the event whole, which says what the bytes hold or why
/// not. Without `attributes`, each item is read as ``ItemWire/keys(_:)``
/// reads it: what the item store keeps, from the same bytes.
///
/// ```swift
/// if let (user, items) = IndexedItemsWire.read(recorded, attributes: true) {
///     for (slice, item) in items { print(user, item.uniqueIdentifier, slice) }
/// }
/// ```
enum IndexedItemsWire {
    static func read(_ recorded: RecordedEvent, attributes: Bool) -> (user: String, items: [(slice: Range<Int>, item: Activitylog_V1_SearchableItem)])? {
        guard recorded.type == SpotlightEventCatalog.itemsIndexed, !recorded.isRedacted,
              recorded.schemaVersion >= 1, recorded.schemaVersion <= SpotlightEventCatalog.schemaVersion else { return nil }
        return recorded.payload.withUnsafeBytes { bytes in
            guard let user = user(bytes, schemaVersion: recorded.schemaVersion),
                  let slices = try? ItemSlices.slices(bytes) else { return nil }
            var items: [(slice: Range<Int>, item: Activitylog_V1_SearchableItem)] = []
            items.reserveCapacity(slices.count)
            for slice in slices {
                let itemBytes = UnsafeRawBufferPointer(rebasing: bytes[slice])
                guard let item = attributes ? ItemWire.item(itemBytes) : ItemWire.keys(itemBytes) else { return nil }
                items.append((slice, item))
            }
            return (user, items)
        }
    }

    /// The event's user, after checking its own fields: items (1), dropped
    /// updates (2) and the user (15), strings in UTF-8. Nil for anything
    /// else. Version 1 events have no user: the default space ("").
    private static func user(_ bytes: UnsafeRawBufferPointer, schemaVersion: UInt32) -> String? {
        var user = ""
        var reader = WireReader(bytes: bytes, from: 0, to: bytes.count)
        do {
            while let field = try reader.next() {
                guard field.isLengthDelimited else { return nil }
                switch field.number {
                case 1: continue
                case 2: guard ItemNamedContent.isUTF8(bytes, field.value) else { return nil }
                case 15:
                    guard let s = String(validating: UnsafeRawBufferPointer(rebasing: bytes[field.value]), as: UTF8.self) else { return nil }
                    user = schemaVersion == 1 ? "" : s
                default: return nil
                }
            }
        } catch {
            return nil
        }
        return user
    }
}
