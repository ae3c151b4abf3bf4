import EventLog
import LMDB
import TextIndex

/// Where an item document's content is: the item's bytes in the event that
/// indexed it (``ItemSlices``), so that the keyword index's `docs` keeps
/// this reference (``IndexDocument/contentReference``) instead of the
/// item's text and attributes, as the item store does
/// (`Docs/Architecture.md`, "Text kept once").
///
/// Bytes: the position, the offset and the length, each a varint (at most
/// 20 bytes).
///
/// ```swift
/// doc.contentReference = ItemContentReference(position: 42, slice: 17..<530).bytes
/// let content = try ItemContentReference(decoding: doc.contentReference!).content(inPayload: payload)
/// ```
struct ItemContentReference: Equatable {
    var position: Position
    var slice: Range<Int>

    init(position: Position, slice: Range<Int>) {
        self.position = position
        self.slice = slice
    }

    init(decoding bytes: some Collection<UInt8>) throws {
        var iterator = bytes.makeIterator()
        func varint() throws -> UInt64 {
            var result: UInt64 = 0, shift: UInt64 = 0
            while let byte = iterator.next(), shift < 64 {
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return result }
                shift += 7
            }
            throw PayloadError("an item's content reference (\(bytes.count) bytes) does not decode")
        }
        position = try varint()
        let offset = try varint(), length = try varint()
        guard iterator.next() == nil, offset <= UInt64(UInt32.max), length <= UInt64(UInt32.max) else {
            throw PayloadError("an item's content reference (\(bytes.count) bytes) does not decode")
        }
        slice = Int(offset)..<Int(offset + length)
    }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(12)
        for value in [position, UInt64(slice.lowerBound), UInt64(slice.count)] {
            var v = value
            while v >= 0x80 {
                out.append(UInt8(v & 0x7F) | 0x80)
                v >>= 7
            }
            out.append(UInt8(v))
        }
        return out
    }

    typealias Content = (fields: [String: [String]], attributes: [String: AttributeValue])

    /// The item's fields and attributes (``SearchDocuments/item(_:)``), read from its bytes in `payload`.
    func content(inPayload payload: UnsafeRawBufferPointer) throws -> Content {
        guard slice.upperBound <= payload.count else {
            throw PayloadError("an item's bytes at \(slice) are past the end of the \(payload.count)-byte payload at position \(position)")
        }
        let item = try Activitylog_V1_SearchableItem(serializedBytes: [UInt8](payload[slice]))
        let doc = SearchDocuments.item(item)
        return (doc.fields, doc.attributes)
    }

    /// The content of the item `reference` names, read from the log `read`
    /// gives the payloads of.
    static func content(_ reference: UnsafeRawBufferPointer,
                        read: (Position, (UnsafeRawBufferPointer) throws -> Content) throws -> Content?) throws -> Content {
        let ref = try ItemContentReference(decoding: reference)
        guard let content = try read(ref.position, ref.content(inPayload:)) else {
            throw PayloadError("an item's content refers to position \(ref.position), which holds no payload (missing or redacted)")
        }
        return content
    }
}
