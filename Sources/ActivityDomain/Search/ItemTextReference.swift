import EventLog
import LMDB
import TextIndex

/// Where an item document's text is: the item's bytes in the event that
/// indexed it (``ItemSlices``), so that the keyword index's `docs` keeps
/// this reference (``IndexDocument/textReference``) instead of the text, as
/// the item store does (`Docs/Architecture.md`, "Text kept once").
///
/// Bytes: the position, the offset and the length, each a varint (at most
/// 20 bytes).
///
/// ```swift
/// doc.textReference = ItemTextReference(position: 42, slice: 17..<530).bytes
/// let fields = try ItemTextReference(decoding: doc.textReference!).fields(from: log)
/// ```
struct ItemTextReference: Equatable {
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
            throw PayloadError("an item's text reference (\(bytes.count) bytes) does not decode")
        }
        position = try varint()
        let offset = try varint(), length = try varint()
        guard iterator.next() == nil, offset <= UInt64(UInt32.max), length <= UInt64(UInt32.max) else {
            throw PayloadError("an item's text reference (\(bytes.count) bytes) does not decode")
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

    /// The item's text fields (``SearchDocuments/item(_:)``), read from its bytes in `payload`.
    func fields(inPayload payload: UnsafeRawBufferPointer) throws -> [String: [String]] {
        guard slice.upperBound <= payload.count else {
            throw PayloadError("an item's text at \(slice) is past the end of the \(payload.count)-byte payload at position \(position)")
        }
        let item = try Activitylog_V1_SearchableItem(serializedBytes: [UInt8](payload[slice]))
        return SearchDocuments.item(item).fields
    }

    /// The fields of the item `reference` names, read from the log `read`
    /// gives the payloads of.
    static func fields(_ reference: UnsafeRawBufferPointer,
                       read: (Position, (UnsafeRawBufferPointer) throws -> [String: [String]]) throws -> [String: [String]]?)
        throws -> [String: [String]] {
        let ref = try ItemTextReference(decoding: reference)
        guard let fields = try read(ref.position, ref.fields(inPayload:)) else {
            throw PayloadError("an item's text refers to position \(ref.position), which holds no payload (missing or redacted)")
        }
        return fields
    }
}
