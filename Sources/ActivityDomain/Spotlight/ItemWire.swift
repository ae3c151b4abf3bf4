import Foundation

/// A `SearchableItem` read from its wire bytes by a walk of its fields
/// (``WireReader``) rather than SwiftProtobuf's generic decoder, for the
/// indexer, which reads every item of every `searchableItems.indexed`
/// event (about 18 K instructions an item decoded whole: a sixth of the
/// indexer's preparing thread on the corpus).
///
/// It takes the bytes only in the shape this code's encoder writes, and
/// gives exactly what `Activitylog_V1_SearchableItem(serializedBytes:)`
/// gives them (a test compares the two on random items, given twice and
/// merged attribute sets included): each known field of its own wire type,
/// strings in UTF-8, no field it does not know (which the whole decode
/// would keep as unknown), field numbers a decoder accepts. Anything else
/// gives nil, and the caller decodes the item whole, which says what the
/// bytes hold or why not. A singular field given twice keeps its last
/// value, a repeated one appends, and an attribute set given twice is
/// merged, as a decoder does.
///
/// ```swift
/// let item = ItemWire.item(bytes) ?? (try Activitylog_V1_SearchableItem(serializedBytes: Array(bytes)))
/// ```
enum ItemWire {
    static func item(_ bytes: UnsafeRawBufferPointer) -> Activitylog_V1_SearchableItem? {
        walk(bytes, attributes: true)
    }

    /// The item without its attribute set: its identifier, domain and
    /// expiration, which is what the item store keeps of it. The bytes are
    /// checked as ``item(_:)`` checks them, so the two take the same bytes;
    /// the attributes' strings are only not made.
    static func keys(_ bytes: UnsafeRawBufferPointer) -> Activitylog_V1_SearchableItem? {
        walk(bytes, attributes: false)
    }

    private static func walk(_ bytes: UnsafeRawBufferPointer, attributes: Bool) -> Activitylog_V1_SearchableItem? {
        var item = Activitylog_V1_SearchableItem()
        var set: Activitylog_V1_ContentAttributes?
        var top = WireReader(bytes: bytes, from: 0, to: bytes.count)
        do {
            while let field = try top.next() {
                guard isValid(field.number) else { return nil }
                switch field.number {
                case 1:
                    guard let s = string(field, in: bytes) else { return nil }
                    item.uniqueIdentifier = s
                case 2:
                    guard let s = string(field, in: bytes) else { return nil }
                    item.domainIdentifier = s
                case 3:
                    guard field.isLengthDelimited else { return nil }
                    var merged = set ?? Activitylog_V1_ContentAttributes()
                    guard try merge(bytes, field.value, into: &merged, keeping: attributes) else { return nil }
                    if attributes { set = merged }
                case 4:
                    guard field.wireType == 0 else { return nil }
                    item.expirationDateMicros = zigzag(field.varint)
                case 5:
                    guard field.wireType == 0 else { return nil }
                    item.defaultExpiration = field.varint != 0
                default:
                    return nil
                }
            }
        } catch {
            return nil
        }
        if let set { item.attributeSet = set }
        return item
    }

    /// Reads the `ContentAttributes` in `bytes[range]` into `set` (or, not
    /// `keeping`, only checks them); false for bytes this walk does not take
    /// as they are.
    private static func merge(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>,
                              into set: inout Activitylog_V1_ContentAttributes, keeping: Bool) throws -> Bool {
        var reader = WireReader(bytes: bytes, from: range.lowerBound, to: range.upperBound)
        while let field = try reader.next() {
            guard isValid(field.number) else { return false }
            switch field.number {
            case 1...7:
                guard keeping else {
                    guard isString(field, in: bytes) else { return false }
                    continue
                }
                guard let s = string(field, in: bytes) else { return false }
                switch field.number {
                case 1: set.title = s
                case 2: set.displayName = s
                case 3: set.contentDescription = s
                case 4: set.keywords.append(s)
                case 5: set.authorNames.append(s)
                case 6: set.comment = s
                default: set.contentType = s
                }
            case 8, 9:
                guard field.wireType == 0 else { return false }
                guard keeping else { continue }
                if field.number == 8 { set.contentCreationDateMicros = zigzag(field.varint) } else {
                    set.contentModificationDateMicros = zigzag(field.varint)
                }
            case 10...12:
                guard field.wireType == 1 else { return false }
                guard keeping else { continue }
                let value = Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: field.value.lowerBound, as: UInt64.self)))
                switch field.number {
                case 10: set.rating = value
                case 11: set.latitude = value
                default: set.longitude = value
                }
            case 13:
                guard field.isLengthDelimited else { return false }
                guard keeping else { continue }
                set.thumbnailData = Data(UnsafeRawBufferPointer(rebasing: bytes[field.value]))
            default:
                return false
            }
        }
        return true
    }

    /// A field number a decoder accepts (1 to 2^29 - 1).
    private static func isValid(_ number: UInt64) -> Bool { number > 0 && number < 1 << 29 }

    /// Whether ``string(_:in:)`` takes the field, without making the string.
    private static func isString(_ field: WireReader.Field, in bytes: UnsafeRawBufferPointer) -> Bool {
        field.isLengthDelimited && ItemNamedContent.isUTF8(bytes, field.value)
    }

    /// A length-delimited field as a string; nil for another wire type or
    /// bytes that are not UTF-8 (checked by ``ItemNamedContent/isUTF8(_:_:)``,
    /// eight ASCII bytes a step; then made without another check that could
    /// repair anything).
    private static func string(_ field: WireReader.Field, in bytes: UnsafeRawBufferPointer) -> String? {
        guard isString(field, in: bytes) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[field.value]), as: UTF8.self)
    }

    /// ZigZag: a `sint64`.
    private static func zigzag(_ varint: UInt64) -> Int64 {
        Int64(bitPattern: varint >> 1) ^ -Int64(bitPattern: varint & 1)
    }
}
