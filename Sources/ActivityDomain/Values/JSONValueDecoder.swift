import Foundation
import TextIndex

/// A `Decoder` over a ``JSONValue``: what ``ActivityJSON`` decodes with. It
/// keeps what Foundation's `JSONDecoder` loses (an integer `42` is not the
/// double `42.0`; the order of members), so a type whose `init(from:)`
/// reads a ``JSONValue`` (the library's value types do) sees the document
/// exactly as written.
///
/// Dates are read from ISO-8601 strings, `Data` from base64 and `URL`s from
/// absolute strings. An integer type reads only a JSON integer that fits;
/// `Double` reads any number.
struct JSONValueDecoder {
    func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try DecoderCore(value: value, codingPath: []).decodeValue(type)
    }
}

struct DecoderCore: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch(type, "an object") }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let values) = value else { throw mismatch([JSONValue].self, "an array") }
        return UnkeyedContainer(values: values, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(value: value, codingPath: codingPath)
    }

    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: codingPath,
                                                debugDescription: "expected \(expected), found \(value.kindName)"))
    }

    /// Reads `type` from the value: the library's special cases first.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if type == JSONValue.self { return value as! T }
        if type == Date.self {
            guard case .string(let text) = value, let date = ISO8601Time.date(from: text) else {
                throw mismatch(type, "an ISO-8601 time such as \"2026-11-22T10:00:00Z\"")
            }
            return date as! T
        }
        if type == Data.self {
            guard case .string(let text) = value, let data = Data(base64Encoded: text) else { throw mismatch(type, "base64 text") }
            return data as! T
        }
        if type == URL.self {
            guard case .string(let text) = value, let url = URL(string: text), url.scheme != nil else {
                throw mismatch(type, "an absolute URL")
            }
            return url as! T
        }
        return try T(from: self)
    }

    // MARK: Scalars

    func bool() throws -> Bool {
        guard case .bool(let b) = value else { throw mismatch(Bool.self, "true or false") }
        return b
    }

    func string() throws -> String {
        guard case .string(let s) = value else { throw mismatch(String.self, "a string") }
        return s
    }

    func double() throws -> Double {
        switch value {
        case .double(let d): return d
        case .integer(let i): return Double(i)
        default: throw mismatch(Double.self, "a number")
        }
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard case .integer(let i) = value else { throw mismatch(type, "an integer") }
        guard let exact = T(exactly: i) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(i) does not fit in \(type)"))
        }
        return exact
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let members: [(key: String, value: JSONValue)]
        let codingPath: [any CodingKey]

        var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

        func contains(_ key: Key) -> Bool { members.contains { $0.key.utf8.elementsEqual(key.stringValue.utf8) } }

        private func member(_ key: Key) throws -> DecoderCore {
            // The last of a repeated member, as JSONValue's subscript reads
            // it; names compare by bytes (two canonically equal names are two).
            guard let value = members.last(where: { $0.key.utf8.elementsEqual(key.stringValue.utf8) })?.value else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\""))
            }
            return DecoderCore(value: value, codingPath: codingPath + [key])
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            guard let value = members.last(where: { $0.key.utf8.elementsEqual(key.stringValue.utf8) })?.value else { return true }
            return value == .null
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try member(key).bool() }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try member(key).string() }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try member(key).double() }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try member(key).double()) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try member(key).integer(type) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try member(key).integer(type) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try member(key).integer(type) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try member(key).integer(type) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try member(key).integer(type) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try member(key).integer(type) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try member(key).integer(type) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try member(key).integer(type) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try member(key).integer(type) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try member(key).integer(type) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try member(key).decodeValue(type) }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try member(key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try member(key).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            let value = members.last(where: { $0.key == "super" })?.value ?? .null
            return DecoderCore(value: value, codingPath: codingPath + [JSONKey("super")])
        }

        func superDecoder(forKey key: Key) throws -> any Decoder { try member(key) }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let values: [JSONValue]
        let codingPath: [any CodingKey]
        var currentIndex = 0

        init(values: [JSONValue], codingPath: [any CodingKey]) {
            self.values = values
            self.codingPath = codingPath
        }

        var count: Int? { values.count }
        var isAtEnd: Bool { currentIndex >= values.count }

        private mutating func next() throws -> DecoderCore {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath + [JSONKey(index: currentIndex)],
                                                                  debugDescription: "the array has \(values.count) elements"))
            }
            defer { currentIndex += 1 }
            return DecoderCore(value: values[currentIndex], codingPath: codingPath + [JSONKey(index: currentIndex)])
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, values[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode(_ type: Bool.Type) throws -> Bool { try next().bool() }
        mutating func decode(_ type: String.Type) throws -> String { try next().string() }
        mutating func decode(_ type: Double.Type) throws -> Double { try next().double() }
        mutating func decode(_ type: Float.Type) throws -> Float { Float(try next().double()) }
        mutating func decode(_ type: Int.Type) throws -> Int { try next().integer(type) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().integer(type) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().integer(type) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().integer(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().integer(type) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try next().integer(type) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().integer(type) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().integer(type) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().integer(type) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().integer(type) }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decodeValue(type) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try next().container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try next().unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder { try next() }
    }

    struct SingleValueContainer: SingleValueDecodingContainer {
        let value: JSONValue
        let codingPath: [any CodingKey]

        private var core: DecoderCore { DecoderCore(value: value, codingPath: codingPath) }

        func decodeNil() -> Bool { value == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try core.bool() }
        func decode(_ type: String.Type) throws -> String { try core.string() }
        func decode(_ type: Double.Type) throws -> Double { try core.double() }
        func decode(_ type: Float.Type) throws -> Float { Float(try core.double()) }
        func decode(_ type: Int.Type) throws -> Int { try core.integer(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try core.integer(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try core.integer(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try core.integer(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try core.integer(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try core.integer(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try core.integer(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try core.integer(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try core.integer(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try core.integer(type) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try core.decodeValue(type) }
    }
}
