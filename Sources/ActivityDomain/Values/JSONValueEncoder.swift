import Foundation
import TextIndex

/// An `Encoder` whose output is a ``JSONValue``: what ``ActivityJSON``
/// encodes with, so that every `Encodable` (the library's value types, and a
/// service's own structs around them) is written by ``JSONValue/serialized()``:
/// keys sorted by UTF-8 bytes, integers as integers, doubles recognizable as
/// doubles, the same bytes every time.
///
/// Dates are written as ISO-8601 UTC strings (`2026-11-22T10:00:00Z`), `Data`
/// as base64 and `URL`s as their absolute string, the shapes of SPEC §6 and §7.
struct JSONValueEncoder {
    func encode(_ value: some Encodable) throws -> JSONValue {
        let node = JSONNode()
        try EncoderCore(node: node, codingPath: []).encodeValue(value)
        return node.value
    }
}

/// A value being encoded: filled in place by the containers that write it.
final class JSONNode {
    enum Content {
        case empty
        case value(JSONValue)
        case object([(key: String, node: JSONNode)])
        case array([JSONNode])
    }

    var content: Content = .empty

    var value: JSONValue {
        switch content {
        case .empty: .object([])
        case .value(let value): value
        case .object(let members): .object(members.map { (key: $0.key, value: $0.node.value) })
        case .array(let nodes): .array(nodes.map(\.value))
        }
    }

    /// The member `key` of an object node (added when missing; a node that
    /// held something else becomes an object).
    func member(_ key: String) -> JSONNode {
        if case .object(let members) = content, let existing = members.last(where: { $0.key.utf8.elementsEqual(key.utf8) }) {
            return existing.node
        }
        let node = JSONNode()
        if case .object(var members) = content {
            members.append((key, node))
            content = .object(members)
        } else {
            content = .object([(key, node)])
        }
        return node
    }

    func makeObject() {
        if case .object = content { return }
        content = .object([])
    }

    func appendElement() -> JSONNode {
        let node = JSONNode()
        if case .array(var nodes) = content {
            nodes.append(node)
            content = .array(nodes)
        } else {
            content = .array([node])
        }
        return node
    }

    func makeArray() {
        if case .array = content { return }
        content = .array([])
    }

    var count: Int {
        if case .array(let nodes) = content { return nodes.count }
        return 0
    }
}

/// The encoder handed to `encode(to:)`; it writes into one node.
struct EncoderCore: Encoder {
    let node: JSONNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(node: node, codingPath: codingPath)
    }

    /// Writes `value` into the node: the library's special cases first.
    func encodeValue(_ value: some Encodable) throws {
        switch value {
        case let json as JSONValue: node.content = .value(json)
        case let date as Date: node.content = .value(.string(ISO8601Time.string(from: date)))
        case let data as Data: node.content = .value(.string(data.base64EncodedString()))
        case let url as URL: node.content = .value(.string(url.absoluteString))
        default: try value.encode(to: self)
        }
    }

    func child(_ node: JSONNode, _ key: any CodingKey) -> EncoderCore {
        EncoderCore(node: node, codingPath: codingPath + [key])
    }

    static func integer<T: BinaryInteger>(_ value: T, _ codingPath: [any CodingKey]) throws -> JSONValue {
        guard let exact = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit in 64 signed bits"))
        }
        return .integer(exact)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: JSONNode
        let codingPath: [any CodingKey]

        private func set(_ value: JSONValue, _ key: Key) { node.member(key.stringValue).content = .value(value) }

        mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { set(.integer(Int64(value)), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { set(.integer(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { set(try EncoderCore.integer(value, codingPath + [key]), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { set(try EncoderCore.integer(value, codingPath + [key]), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try EncoderCore(node: node.member(key.stringValue), codingPath: codingPath + [key]).encodeValue(value)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                            forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            EncoderCore(node: node.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            EncoderCore(node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            EncoderCore(node: node.member("super"), codingPath: codingPath + [JSONKey("super")])
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            EncoderCore(node: node.member(key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let node: JSONNode
        let codingPath: [any CodingKey]
        var count: Int { node.count }

        private func append(_ value: JSONValue) { node.appendElement().content = .value(value) }
        private var nextKey: any CodingKey { JSONKey(index: count) }

        mutating func encodeNil() throws { append(.null) }
        mutating func encode(_ value: Bool) throws { append(.bool(value)) }
        mutating func encode(_ value: String) throws { append(.string(value)) }
        mutating func encode(_ value: Double) throws { append(.double(value)) }
        mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
        mutating func encode(_ value: Int) throws { append(.integer(Int64(value))) }
        mutating func encode(_ value: Int8) throws { append(.integer(Int64(value))) }
        mutating func encode(_ value: Int16) throws { append(.integer(Int64(value))) }
        mutating func encode(_ value: Int32) throws { append(.integer(Int64(value))) }
        mutating func encode(_ value: Int64) throws { append(.integer(value)) }
        mutating func encode(_ value: UInt) throws { append(try EncoderCore.integer(value, codingPath + [nextKey])) }
        mutating func encode(_ value: UInt8) throws { append(.integer(Int64(value))) }
        mutating func encode(_ value: UInt16) throws { append(.integer(Int64(value))) }
        mutating func encode(_ value: UInt32) throws { append(.integer(Int64(value))) }
        mutating func encode(_ value: UInt64) throws { append(try EncoderCore.integer(value, codingPath + [nextKey])) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let key = nextKey
            try EncoderCore(node: node.appendElement(), codingPath: codingPath + [key]).encodeValue(value)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let key = nextKey
            return EncoderCore(node: node.appendElement(), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let key = nextKey
            return EncoderCore(node: node.appendElement(), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let key = nextKey
            return EncoderCore(node: node.appendElement(), codingPath: codingPath + [key])
        }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
        let node: JSONNode
        let codingPath: [any CodingKey]

        private func set(_ value: JSONValue) { node.content = .value(value) }

        mutating func encodeNil() throws { set(.null) }
        mutating func encode(_ value: Bool) throws { set(.bool(value)) }
        mutating func encode(_ value: String) throws { set(.string(value)) }
        mutating func encode(_ value: Double) throws { set(.double(value)) }
        mutating func encode(_ value: Float) throws { set(.double(Double(value))) }
        mutating func encode(_ value: Int) throws { set(.integer(Int64(value))) }
        mutating func encode(_ value: Int8) throws { set(.integer(Int64(value))) }
        mutating func encode(_ value: Int16) throws { set(.integer(Int64(value))) }
        mutating func encode(_ value: Int32) throws { set(.integer(Int64(value))) }
        mutating func encode(_ value: Int64) throws { set(.integer(value)) }
        mutating func encode(_ value: UInt) throws { set(try EncoderCore.integer(value, codingPath)) }
        mutating func encode(_ value: UInt8) throws { set(.integer(Int64(value))) }
        mutating func encode(_ value: UInt16) throws { set(.integer(Int64(value))) }
        mutating func encode(_ value: UInt32) throws { set(.integer(Int64(value))) }
        mutating func encode(_ value: UInt64) throws { set(try EncoderCore.integer(value, codingPath)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try EncoderCore(node: node, codingPath: codingPath).encodeValue(value)
        }
    }
}

/// A coding key made at run time: an object member's name, or an array index.
struct JSONKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init(index: Int) {
        stringValue = "\(index)"
        intValue = index
    }

    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(index: intValue) }
}
