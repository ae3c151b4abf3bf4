import Foundation
import TextIndex

/// One name of an item's search document (``SearchDocuments/item(_:)``),
/// read from the item's wire bytes: what a query checking a candidate
/// needs, without decoding the whole `SearchableItem` and building its
/// whole document (about 28 K instructions an item, most of a structured
/// query's time once the text stayed in the log).
///
/// It walks the item's fields and its attribute set's with ``WireReader``
/// and decodes only the field the name maps to, by the rules a decoder
/// applies: a singular field given twice keeps its last value, the
/// attribute set given twice is merged (so its fields are read across every
/// occurrence, in order), a field of another wire type than its own is
/// skipped as unknown. Every name of the item mapping is read this way; the
/// mapping is `SearchDocuments`'s, and the exactness test
/// (`ItemNamedContentTests`) holds the two equal for every name the query
/// language accepts.
///
/// ```swift
/// ItemNamedContent.value(named: "keywords", in: itemBytes)   // .field(["game", "puzzle"]), keywords once each
/// ItemNamedContent.value(named: "kind", in: itemBytes)       // .absent: the header has it
/// ```
enum ItemNamedContent {
    /// Where a name's value is in a `SearchableItem`.
    private enum Source {
        /// A string field of the attribute set (`ContentAttributes`), repeated or not.
        case text(UInt64, repeated: Bool)
        /// A `sint64` of microseconds in the attribute set: a date attribute.
        case date(UInt64)
        /// A `double` in the attribute set: a number attribute.
        case number(UInt64)
        /// `SearchableItem.domain_identifier` (field 2): a string attribute.
        case domain
        /// Not in an item's document (the header's names included).
        case none
    }

    private static func source(_ name: String) -> Source {
        switch name {
        case "title": .text(1, repeated: false)
        case "displayName": .text(2, repeated: false)
        case "contentDescription": .text(3, repeated: false)
        case "keywords": .text(4, repeated: true)
        case "authorNames": .text(5, repeated: true)
        case "comment": .text(6, repeated: false)
        case "contentType": .text(7, repeated: false)
        case "contentCreationDate": .date(8)
        case "contentModificationDate": .date(9)
        case "rating": .number(10)
        case "latitude": .number(11)
        case "longitude": .number(12)
        case "domainIdentifier": .domain
        // thumbnailData (13) is never indexed.
        default: .none
        }
    }

    /// What the item whose bytes are `bytes` holds under `name`; nil when
    /// the bytes are not what the walk takes as they are (not the wire
    /// format, a group, field number 0, a string field that is not UTF-8):
    /// then the caller decodes the item whole, which says what they hold or
    /// why not. Whatever the name, the walk checks what the whole decode
    /// would refuse: the structure of the item and its attribute set, and
    /// that every string field of both is UTF-8.
    static func value(named name: String, in bytes: UnsafeRawBufferPointer) -> NamedContent? {
        let source = source(name)
        var strings: [String] = []
        var domain: String?
        var micros: Int64?
        var number: Double?
        var top = WireReader(bytes: bytes, from: 0, to: bytes.count)
        do {
            while let field = try top.next() {
                guard isValid(field.number) else { return nil }
                // Strings: unique_identifier, domain_identifier.
                if field.number <= 2 && field.isLengthDelimited {
                    if field.number == 2, case .domain = source {
                        guard let s = string(field, in: bytes) else { return nil }
                        domain = s
                    } else if !isUTF8(bytes, field.value) {
                        return nil
                    }
                }
                guard field.number == 3 && field.isLengthDelimited else { continue }
                var set = WireReader(bytes: bytes, from: field.value.lowerBound, to: field.value.upperBound)
                while let inner = try set.next() {
                    guard isValid(inner.number) else { return nil }
                    switch source {
                    case .text(let n, let repeated) where inner.number == n && inner.isLengthDelimited:
                        guard let s = string(inner, in: bytes) else { return nil }
                        if repeated { strings.append(s) } else { strings = [s] }
                    case .date(let n) where inner.number == n && inner.wireType == 0:
                        // ZigZag: sint64.
                        micros = Int64(bitPattern: inner.varint >> 1) ^ -Int64(bitPattern: inner.varint & 1)
                    case .number(let n) where inner.number == n && inner.wireType == 1:
                        number = Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: inner.value.lowerBound,
                                                                                             as: UInt64.self)))
                    default:
                        // The set's other strings (fields 1 to 7): a decoder refuses one that is not UTF-8.
                        if inner.number <= 7 && inner.isLengthDelimited && !isUTF8(bytes, inner.value) { return nil }
                    }
                }
            }
        } catch {
            return nil
        }
        switch source {
        case .text(_, let repeated):
            if strings.isEmpty { return .absent }
            return .field(repeated ? SearchDocuments.uniqued(strings) : strings)
        case .date: return micros.map { .attribute(.date(Date(microseconds: $0))) } ?? .absent
        case .number: return number.map { .attribute(.number($0)) } ?? .absent
        case .domain: return domain.map { .attribute(.string($0)) } ?? .absent
        case .none: return .absent
        }
    }

    /// A field number a decoder accepts (1 to 2^29 - 1).
    private static func isValid(_ number: UInt64) -> Bool { number > 0 && number < 1 << 29 }

    /// A length-delimited value as a string; nil when it is not UTF-8 (a decoder refuses it).
    private static func string(_ field: WireReader.Field, in bytes: UnsafeRawBufferPointer) -> String? {
        String(validating: UnsafeRawBufferPointer(rebasing: bytes[field.value]), as: UTF8.self)
    }

    /// Whether `bytes[range]` is UTF-8 (well-formed: no overlong forms, no
    /// surrogates, nothing past U+10FFFF; what SwiftProtobuf accepts in a
    /// string), without making a string: eight ASCII bytes a step, other
    /// sequences by the Unicode standard's table 3-7. (The standard
    /// library's scalar parser cost half of the walk on the corpus.)
    static func isUTF8(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        var i = range.lowerBound
        let end = range.upperBound
        while i < end {
            if i + 8 <= end, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            let b = bytes[i]
            if b < 0x80 {
                i += 1
                continue
            }
            // The second byte's range depends on the first; the others are 80...BF.
            let count: Int, low: UInt8, high: UInt8
            switch b {
            case 0xC2...0xDF: (count, low, high) = (2, 0x80, 0xBF)
            case 0xE0: (count, low, high) = (3, 0xA0, 0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (count, low, high) = (3, 0x80, 0xBF)
            case 0xED: (count, low, high) = (3, 0x80, 0x9F)
            case 0xF0: (count, low, high) = (4, 0x90, 0xBF)
            case 0xF1...0xF3: (count, low, high) = (4, 0x80, 0xBF)
            case 0xF4: (count, low, high) = (4, 0x80, 0x8F)
            default: return false
            }
            guard end - i >= count, (low...high).contains(bytes[i + 1]) else { return false }
            for k in 2..<count where bytes[i + k] & 0xC0 != 0x80 { return false }
            i += count
        }
        return true
    }
}
