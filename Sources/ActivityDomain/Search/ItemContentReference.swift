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
/// let content = try ItemContentReference.content(reference, in: log)   // fields and attributes
/// let title = try ItemContentReference.namedContent(reference, "title", in: log)   // .field([…]) or .absent
/// ```
struct ItemContentReference: Equatable {
    var position: Position
    var slice: Range<Int>

    init(position: Position, slice: Range<Int>) {
        self.position = position
        self.slice = slice
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = ByteReader(bytes)
        let offset: UInt64, length: UInt64
        do throws(ByteError) {
            position = try r.varint()
            offset = try r.varint(atMost: UInt64(UInt32.max))
            length = try r.varint(atMost: UInt64(UInt32.max))
        } catch {
            throw PayloadError("an item's content reference (\(bytes.count) bytes) does not decode: \(error)")
        }
        guard r.isAtEnd else {
            throw PayloadError("an item's content reference (\(bytes.count) bytes) does not decode: \(r.remaining) bytes after its three numbers")
        }
        slice = Int(offset)..<Int(offset + length)
    }

    var bytes: [UInt8] {
        var w = ByteWriter(capacity: 12)
        w.varint(position)
        w.varint(slice.lowerBound)
        w.varint(slice.count)
        return w.bytes
    }

    /// The fields and attributes (``SearchDocuments/item(_:)``) of the item
    /// `reference` names, read from `log`.
    static func content(_ reference: UnsafeRawBufferPointer, in log: LogReader) throws -> TextIndex.Content {
        let ref = try ItemContentReference(decoding: reference)
        let doc = SearchDocuments.item(try ItemSlices.item(at: ref.position, ref.slice, in: log))
        return (doc.fields, doc.attributes)
    }

    /// What the item `reference` names holds under `name` (a field, else an
    /// attribute of ``SearchDocuments/item(_:)``), read from its wire bytes
    /// in `log` without decoding the rest (``ItemNamedContent``): what a
    /// query checking a candidate asks. Equal to
    /// `NamedContent(name, in: content(reference, in: log))`.
    static func namedContent(_ reference: UnsafeRawBufferPointer, _ name: String, in log: LogReader) throws -> NamedContent {
        let ref = try ItemContentReference(decoding: reference)
        return try ItemSlices.withItemBytes(at: ref.position, ref.slice, in: log) { bytes in
            if let found = ItemNamedContent.value(named: name, in: bytes) { return found }
            // Bytes the walk does not take as they are: the whole decode says what they hold (or why not).
            let doc = SearchDocuments.item(try Activitylog_V1_SearchableItem(serializedBytes: [UInt8](bytes)))
            return NamedContent(name, in: (doc.fields, doc.attributes))
        }
    }
}
