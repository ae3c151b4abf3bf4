import Foundation
import LMDB

/// The stored form of an ``IndexDocument`` (database `docs`): a compact,
/// deterministic, length-prefixed binary encoding.
///
/// ```
/// u8      format: 1, or 2 for a document whose text the caller keeps
/// str     kind                      str = varint byte count, UTF-8 bytes
/// str     identifier
/// u8      1 when an expiration date follows, else 0
/// [f64]   expirationDate            seconds since 2001-01-01T00:00:00Z, IEEE 754 bits, big-endian
/// format 2 (the caller keeps the fields and attributes):
/// str     the content reference (``IndexDocument/contentReference``); nothing follows
/// format 1:
/// varint  field count, then by name (UTF-8 byte order):
///           str name, varint value count, str value…
/// varint  attribute count, then by name:
///           str name, u8 type (1 strings, 2 numbers, 3 dates), varint count,
///           values: str for strings, f64 (as above) for numbers and dates
/// ```
///
/// Values keep the order the caller gave. Sorting the names makes the bytes a
/// function of the document, not of dictionary order.
///
/// ```swift
/// let bytes = DocumentRecord.encode(doc)
/// let back = try DocumentRecord.decode(bytes)   // == doc
/// ```
enum DocumentRecord {
    static let format: UInt8 = 1
    static let referenceFormat: UInt8 = 2

    static func encode(_ doc: IndexDocument) -> [UInt8] {
        if let reference = doc.contentReference {
            var w = ByteWriter(capacity: 24 + doc.kind.utf8.count + doc.identifier.utf8.count + reference.count)
            header(of: doc, format: referenceFormat, into: &w)
            w.varint(reference.count)
            w.append(reference)
            return w.bytes
        }
        // Sized once: the text is most of the record (a few hundred bytes,
        // which grew the buffer twice from a fixed start).
        var size = 32 + doc.kind.utf8.count + doc.identifier.utf8.count
        for (name, values) in doc.fields {
            size += name.utf8.count + 4
            for v in values { size += v.utf8.count + 3 }
        }
        size += doc.attributes.count * 40
        var w = ByteWriter(capacity: size)
        header(of: doc, format: format, into: &w)
        // Sorted as pairs: no lookup by name afterwards.
        let fields = doc.fields.sorted { utf8Less($0.key, $1.key) }
        w.varint(fields.count)
        for (name, values) in fields {
            w.string(name)
            w.varint(values.count)
            for v in values { w.string(v) }
        }
        let attributes = doc.attributes.sorted { utf8Less($0.key, $1.key) }
        w.varint(attributes.count)
        for (name, value) in attributes {
            w.string(name)
            switch value {
            case .strings(let values):
                w.byte(1)
                w.varint(values.count)
                for v in values { w.string(v) }
            case .numbers(let values):
                w.byte(2)
                w.varint(values.count)
                for v in values { w.double(v) }
            case .dates(let values):
                w.byte(3)
                w.varint(values.count)
                for v in values { w.double(v.timeIntervalSinceReferenceDate) }
            }
        }
        return w.bytes
    }

    /// Format, kind, identifier, expiration: the part every format shares.
    private static func header(of doc: IndexDocument, format: UInt8, into w: inout ByteWriter) {
        w.byte(format)
        w.string(doc.kind)
        w.string(doc.identifier)
        if let e = doc.expirationDate {
            w.byte(1)
            w.double(e.timeIntervalSinceReferenceDate)
        } else {
            w.byte(0)
        }
    }

    /// The whole document; a format-2 record's fields and attributes come
    /// from `content` (``TextIndexError/noContentSource(identifier:)``
    /// without one).
    static func decode(_ bytes: UnsafeRawBufferPointer, content: TextIndex.ContentSource?) throws -> IndexDocument {
        try TextIndexError.reading("document record") { try decodeRecord(bytes, content: content) }
    }

    private static func decodeRecord(_ bytes: UnsafeRawBufferPointer, content: TextIndex.ContentSource?) throws -> IndexDocument {
        var r = ByteReader(bytes)
        var doc = try header(&r)
        if let reference = try reference(bytes, &r) {
            guard let content else { throw TextIndexError.noContentSource(identifier: doc.identifier) }
            let kept = try content(reference)
            doc.fields = kept.fields
            doc.attributes = kept.attributes
            doc.contentReference = [UInt8](reference)
            return doc
        }
        let fieldCount = try r.int()
        for _ in 0..<fieldCount {
            let name = try r.string()
            let n = try r.count()
            var values: [String] = []
            values.reserveCapacity(n)
            for _ in 0..<n { values.append(try r.string()) }
            doc.fields[name] = values
        }
        let attributeCount = try r.int()
        for _ in 0..<attributeCount {
            let name = try r.string()
            let type = try r.byte()
            let n = try r.int()
            switch type {
            case 1:
                var values: [String] = []
                for _ in 0..<n { values.append(try r.string()) }
                doc.attributes[name] = .strings(values)
            case 2:
                var values: [Double] = []
                for _ in 0..<n { values.append(try r.double()) }
                doc.attributes[name] = .numbers(values)
            case 3:
                var values: [Date] = []
                for _ in 0..<n { values.append(Date(timeIntervalSinceReferenceDate: try r.double())) }
                doc.attributes[name] = .dates(values)
            default:
                throw TextIndexError.corrupt("attribute type \(type)")
            }
        }
        return doc
    }

    /// What a record holds under one name.
    enum NamedValues {
        case strings([String])
        /// Numbers or dates, this many.
        case other(Int)
        case absent
    }

    /// The header (kind, identifier, expiration) and the values of `name`
    /// (a field, else an attribute), decoding nothing else: what checking
    /// a query candidate needs.
    /// (A format-2 record's come from `content`, asked for `name` alone.)
    static func values(named key: String, _ name: [UInt8], in bytes: UnsafeRawBufferPointer,
                       content: TextIndex.NamedContentSource?) throws -> (header: IndexDocument, values: NamedValues) {
        try TextIndexError.reading("document record") { try valuesInRecord(named: key, name, in: bytes, content: content) }
    }

    private static func valuesInRecord(named key: String, _ name: [UInt8], in bytes: UnsafeRawBufferPointer,
                                       content: TextIndex.NamedContentSource?) throws -> (header: IndexDocument, values: NamedValues) {
        var r = ByteReader(bytes)
        let doc = try header(&r)
        if let reference = try reference(bytes, &r) {
            guard let content else { throw TextIndexError.noContentSource(identifier: doc.identifier) }
            switch try content(reference, key) {
            case .field(let values), .attribute(.strings(let values)): return (doc, .strings(values))
            case .attribute(.numbers(let values)): return (doc, .other(values.count))
            case .attribute(.dates(let values)): return (doc, .other(values.count))
            case .absent: return (doc, .absent)
            }
        }
        func nameMatches(_ r: inout ByteReader) throws -> Bool {
            let n = try r.int()
            let stored = try r.bytes(n)
            return stored.elementsEqual(name)
        }
        let fieldCount = try r.int()
        for _ in 0..<fieldCount {
            let match = try nameMatches(&r)
            let n = try r.count()
            if match {
                var values: [String] = []
                values.reserveCapacity(n)
                for _ in 0..<n { values.append(try r.string()) }
                return (doc, .strings(values))
            }
            for _ in 0..<n { try r.skipString() }
        }
        let attributeCount = try r.int()
        for _ in 0..<attributeCount {
            let match = try nameMatches(&r)
            let type = try r.byte()
            let n = try r.int()
            switch type {
            case 1:
                if match {
                    var values: [String] = []
                    for _ in 0..<n { values.append(try r.string()) }
                    return (doc, .strings(values))
                }
                for _ in 0..<n { try r.skipString() }
            case 2, 3:
                if match { return (doc, .other(n)) }
                _ = try r.bytes(8 * n)
            default:
                throw TextIndexError.corrupt("attribute type \(type)")
            }
        }
        return (doc, .absent)
    }

    /// The content reference of a format-2 record, read after its header; nil for format 1.
    private static func reference(_ bytes: UnsafeRawBufferPointer, _ r: inout ByteReader) throws -> UnsafeRawBufferPointer? {
        guard bytes[0] == referenceFormat else { return nil }
        return try r.bytes(try r.int())
    }

    /// Kind, identifier and expiration only: what a search result needs.
    static func decodeHeader(_ bytes: UnsafeRawBufferPointer) throws -> IndexDocument {
        var r = ByteReader(bytes)
        return try TextIndexError.reading("document record") { try header(&r) }
    }

    /// What a search hit needs of a record, without making strings: the
    /// kind's and the identifier's UTF-8 bytes where they lie in `bytes`
    /// (valid as long as `bytes` is), and the expiration (seconds since the
    /// reference date), so that a search orders its hits by them and makes
    /// strings for the hits it returns only.
    static func decodeHitBytes(_ bytes: UnsafeRawBufferPointer) throws
        -> (kind: UnsafeRawBufferPointer, identifier: UnsafeRawBufferPointer, expiration: Double?) {
        try TextIndexError.reading("document record") {
            var r = ByteReader(bytes)
            let f = try r.byte()
            guard f == format || f == referenceFormat else { throw TextIndexError.corrupt("document format \(f)") }
            let kind = try r.bytes(try r.int())
            let identifier = try r.bytes(try r.int())
            let expiration = try r.byte() == 1 ? try r.double() : nil
            return (kind, identifier, expiration)
        }
    }

    private static func header(_ r: inout ByteReader) throws -> IndexDocument {
        let f = try r.byte()
        guard f == format || f == referenceFormat else { throw TextIndexError.corrupt("document format \(f)") }
        let kind = try r.string()
        let identifier = try r.string()
        var doc = IndexDocument(kind: kind, identifier: identifier)
        if try r.byte() == 1 {
            doc.expirationDate = Date(timeIntervalSinceReferenceDate: try r.double())
        }
        return doc
    }
}

/// Orders strings by their UTF-8 bytes (what LMDB and other languages see),
/// not by Swift's Unicode ordering (``KeyOrder/precedes(_:_:)``).
@inline(__always)
func utf8Less(_ a: String, _ b: String) -> Bool { KeyOrder.precedes(a, b) }
