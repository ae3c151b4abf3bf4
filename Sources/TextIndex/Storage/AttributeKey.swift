import Foundation
import LMDB

/// Keys of the attribute index (database `values`): one key per value of a
/// structured attribute and postings block, sorted so that an equality, a
/// prefix or a range of a query is a cursor range; the value lists the
/// block's documents (``AttributeBlock``). In the database each key
/// follows the space id (u32 big-endian, ``TextIndex/scoped(_:)``); these
/// functions build what comes after it, up to the block.
///
/// ```
/// name bytes, 0x00, type, encoded value, u32 block (big-endian)
///   type 's' (strings): the value folded for the index (case, diacritics),
///                       NUL bytes dropped, cut to 400 bytes at a character
///                       boundary, then 0x00
///   type 'n' (numbers), 'd' (dates, seconds since 2001-01-01 UTC):
///                       8 bytes: IEEE 754 bits with the sign bit flipped
///                       (positive) or all bits flipped (negative), big-endian,
///                       so that byte order is numeric order; NaN is not indexed
/// ```
///
/// `kind` and `expirationDate` are indexed as attributes too. Text fields
/// are not: their words are in the postings, their presence in database
/// `masks`. `uniqueIdentifier` is the document's identifier unless the
/// document gives it, and the identifier is not indexed here (database
/// `ids` holds it, keyed by kind and identifier): a document that gives
/// `uniqueIdentifier` (as an attribute or a field) has the key
/// `uniqueIdentifier 0x00 'e'` (no value) in its block instead.
///
/// ```swift
/// AttributeKey.prefix(name: "domainIdentifier", string: "orders")   // "domainIdentifier\0sorders\0"
/// ```
enum AttributeKey {
    static let maximumStringBytes = 400

    /// Every key of `doc` without the block suffix, sorted.
    static func keys(of doc: IndexDocument) -> [[UInt8]] {
        var keys: [[UInt8]] = []
        keys.reserveCapacity(doc.attributes.count + 3)
        keys.append(stringKey(name: "kind", doc.kind))
        if let e = doc.expirationDate, let k = prefix(name: "expirationDate", type: "d", number: e.timeIntervalSinceReferenceDate) {
            keys.append(k)
        }
        // A document's own identifier is not indexed here: `ids` holds it
        // (``QueryEvaluator/identifierMatches(_:)``). A document that gives
        // `uniqueIdentifier` itself is marked, so that a presence test
        // knows which documents answer with their identifier.
        if doc.attributes["uniqueIdentifier"] != nil || doc.fields["uniqueIdentifier"] != nil {
            keys.append(prefix(name: "uniqueIdentifier", type: "e"))
        }
        for (name, value) in doc.attributes {
            switch value {
            case .strings(let values):
                for v in values { keys.append(stringKey(name: name, v)) }
            case .numbers(let values):
                for v in values { if let k = prefix(name: name, type: "n", number: v) { keys.append(k) } }
            case .dates(let values):
                for v in values {
                    if let k = prefix(name: name, type: "d", number: v.timeIntervalSinceReferenceDate) { keys.append(k) }
                }
            }
        }
        keys.sort { $0.lexicographicallyPrecedes($1) }
        // A multi-valued attribute may repeat a value: one key suffices.
        var unique: [[UInt8]] = []
        unique.reserveCapacity(keys.count)
        for k in keys where unique.last != k { unique.append(k) }
        return unique
    }

    /// `name 0x00`: every key of the attribute.
    static func prefix(name: String) -> [UInt8] {
        Array(name.utf8) + [0]
    }

    /// `name 0x00 type`: every key of the attribute with values of `type`.
    static func prefix(name: String, type: Character) -> [UInt8] {
        prefix(name: name) + [type.asciiValue!]
    }

    /// `name 0x00 's' folded`: the start of keys of strings beginning with
    /// `text` (without the terminator: a prefix search).
    static func prefix(name: String, stringPrefix text: String) -> [UInt8] {
        prefix(name: name, type: "s") + foldedValue(text)
    }

    /// `name 0x00 's' folded 0x00`: the keys of exactly that string (once folded).
    static func prefix(name: String, string: String) -> [UInt8] {
        prefix(name: name, stringPrefix: string) + [0]
    }

    /// What ``prefix(name:string:)`` gives, built in one array: an
    /// indexed document's keys are most of a flush's attribute work.
    static func stringKey(name: String, _ value: String) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(name.utf8.count + value.utf8.count + 3)
        key.append(contentsOf: name.utf8)
        key.append(0)
        key.append(UInt8(ascii: "s"))
        var copy = value
        copy.withUTF8 { bytes in
            guard TextFolding.isASCII(bytes) else {
                key.append(contentsOf: foldedValue(bytes))
                return
            }
            // ASCII folds to its lowercase (TextFolding's fast path); every byte is a character.
            var n = 0
            for b in bytes where b != 0 && n < maximumStringBytes {
                key.append(b &- 0x41 < 26 ? b | 0x20 : b)
                n += 1
            }
        }
        key.append(0)
        return key
    }

    static func prefix(name: String, type: Character, number: Double) -> [UInt8]? {
        guard !number.isNaN else { return nil }
        // One array (a key of every dated document), not four concatenated.
        var key: [UInt8] = []
        key.reserveCapacity(name.utf8.count + 10)
        key.append(contentsOf: name.utf8)
        key.append(0)
        key.append(type.asciiValue!)
        BigEndian.append(orderableBits(number), to: &key)
        return key
    }

    static func foldedValue(_ text: String) -> [UInt8] {
        var copy = text
        return copy.withUTF8 { foldedValue($0) }
    }

    /// UTF-8 `bytes` folded for the index, NUL bytes dropped, cut to
    /// ``maximumStringBytes`` at a character boundary.
    static func foldedValue(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var folded: [UInt8] = []
        TextFolding.fold(bytes, .index, into: &folded)
        folded.removeAll { $0 == 0 }
        if folded.count > maximumStringBytes {
            folded.removeLast(folded.count - Tokenizer.truncatedLength(folded, maximumStringBytes))
        }
        return folded
    }

    /// 8 bytes whose byte order is the numeric order of `value`.
    static func orderable(_ value: Double) -> [UInt8] {
        BigEndian.bytes(of: orderableBits(value))
    }

    /// The bits ``orderable(_:)`` writes big-endian.
    static func orderableBits(_ value: Double) -> UInt64 {
        let v = value == 0 ? 0.0 : value  // -0.0 sorts as 0.0
        let bits = v.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    static func number(fromOrderable bytes: UnsafeRawBufferPointer) -> Double {
        var bits = BigEndian.load(UInt64.self, from: bytes)
        bits = bits & (1 << 63) != 0 ? bits & ~(1 << 63) : ~bits
        return Double(bitPattern: bits)
    }
}
