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
        payload.withUnsafeBytes { bytes in
            var slices: [Range<Int>] = []
            var reader = WireReader(bytes: bytes, at: 0, end: bytes.count)
            while let field = reader.nextField() {
                guard let value = field.value else { return nil }
                guard field.number == 1 else { continue }
                guard field.isLengthDelimited else { return nil }
                var inner = WireReader(bytes: bytes, at: value.lowerBound, end: value.upperBound)
                var item: Range<Int>?
                while let innerField = inner.nextField() {
                    guard let innerValue = innerField.value else { return nil }
                    guard innerField.number == 1 else { continue }
                    guard innerField.isLengthDelimited, item == nil else { return nil }
                    item = innerValue
                }
                guard inner.isAtEnd, let item else { return nil }
                slices.append(item)
            }
            return reader.isAtEnd ? slices : nil
        }
    }
}

/// Reads a message's fields, by the wire format's rules (varint tags, four
/// wire types), without decoding their values.
private struct WireReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int
    let end: Int
    /// False once a field did not parse: ``isAtEnd`` is then false for good.
    private var failed = false

    init(bytes: UnsafeRawBufferPointer, at offset: Int, end: Int) {
        self.bytes = bytes
        self.offset = offset
        self.end = end
    }

    var isAtEnd: Bool { !failed && offset == end }

    struct Field {
        var number: UInt64
        var isLengthDelimited: Bool
        /// The value's bytes (for a length-delimited field, without its length); nil when they run past the end.
        var value: Range<Int>?
    }

    /// The next field, or nil at the end (or after a tag that does not parse).
    mutating func nextField() -> Field? {
        guard !failed, offset < end else { return nil }
        guard let tag = varint() else { failed = true; return nil }
        let start: Int, length: Int
        switch tag & 7 {
        case 0:
            guard varint() != nil else { return fail(tag) }
            return Field(number: tag >> 3, isLengthDelimited: false, value: offset..<offset)
        case 1: start = offset; length = 8
        case 5: start = offset; length = 4
        case 2:
            guard let n = varint(), n <= UInt64(end - offset) else { return fail(tag) }
            start = offset; length = Int(n)
        default: return fail(tag)
        }
        guard length <= end - start else { return fail(tag) }
        offset = start + length
        return Field(number: tag >> 3, isLengthDelimited: tag & 7 == 2, value: start..<(start + length))
    }

    private mutating func fail(_ tag: UInt64) -> Field {
        failed = true
        offset = end
        return Field(number: tag >> 3, isLengthDelimited: false, value: nil)
    }

    private mutating func varint() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < end, shift < 64 {
            let byte = bytes[offset]
            offset += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
        return nil
    }
}
