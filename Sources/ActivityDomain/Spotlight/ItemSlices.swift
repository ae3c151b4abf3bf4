import EventLog

/// Where each item's bytes are in a `searchableItems.indexed` payload: the
/// ranges the item store refers to instead of copying the item.
///
/// A `SearchableItemsIndexed` message is its `items` (field 1, one
/// `IndexedItem` each, in order) among other fields; an `IndexedItem` holds
/// the whole item in its field 1. Protocol Buffers' wire format makes that
/// field's value a contiguous run of bytes that decodes, alone, to the same
/// `SearchableItem`, as long as the field occurs once in its `IndexedItem`
/// (a repeated occurrence would be merged by a decoder, and is refused here).
///
/// ```swift
/// if let slices = ItemSlices.find(in: recorded.payload), slices.count == event.items.count {
///     let first = try Activitylog_V1_SearchableItem(serializedBytes: Array(recorded.payload[slices[0]]))
/// }
/// ```
enum ItemSlices {
    /// The byte range of each `IndexedItem.item` in `payload`, in order; nil
    /// when the bytes are not what this expects (then the caller copies).
    static func find(in payload: [UInt8]) -> [Range<Int>]? {
        payload.withUnsafeBytes { bytes in try? slices(bytes) }
    }

    /// The item whose bytes are `slice` of the payload at `position`, read
    /// from `log` in place: what the item store and the keyword index keep
    /// instead of the item. A missing or redacted payload, or a slice past
    /// its end, is an error naming the position.
    static func item(at position: Position, _ slice: Range<Int>, in log: LogReader) throws -> Activitylog_V1_SearchableItem {
        try withItemBytes(at: position, slice, in: log) { try Activitylog_V1_SearchableItem(serializedBytes: [UInt8]($0)) }
    }

    /// `body` of the item's bytes (`slice` of the payload at `position`), in
    /// place; the errors of ``item(at:_:in:)``.
    static func withItemBytes<R>(at position: Position, _ slice: Range<Int>, in log: LogReader,
                                 _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        let result: R?
        do {
            result = try log.withPayloadBytes(at: position, slice, body)
        } catch let error as EventLogError where error.code == .invalidArgument {
            throw PayloadError("an item's bytes \(slice) are past the end of the payload at position \(position)")
        }
        guard let result else {
            throw PayloadError("an item refers to position \(position), which holds no payload (missing or redacted)")
        }
        return result
    }

    /// The item ranges in `bytes` (a `searchableItems.indexed` payload),
    /// as ``find(in:)``; throws for bytes that are not the wire format.
    static func slices(_ bytes: UnsafeRawBufferPointer) throws -> [Range<Int>]? {
        var slices: [Range<Int>] = []
        var reader = WireReader(bytes: bytes, from: 0, to: bytes.count)
        while let field = try reader.next() {
            guard field.number == 1 else { continue }
            guard field.isLengthDelimited else { return nil }
            var inner = WireReader(bytes: bytes, from: field.value.lowerBound, to: field.value.upperBound)
            var item: Range<Int>?
            while let innerField = try inner.next() {
                guard innerField.number == 1 else { continue }
                guard innerField.isLengthDelimited, item == nil else { return nil }
                item = innerField.value
            }
            guard let item else { return nil }
            slices.append(item)
        }
        return slices
    }
}
