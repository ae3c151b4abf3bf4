import Foundation
import LMDB

/// The Protocol Buffers form of userInfo values (`UserInfoValue` in
/// `Schema/activity.proto`). Dictionaries become entries sorted by key, so
/// the same value always encodes to the same bytes.
extension UserInfoValue {
    var proto: Activitylog_V1_UserInfoValue {
        var message = Activitylog_V1_UserInfoValue()
        switch self {
        case .string(let s): message.kind = .string(s)
        case .integer(let i): message.kind = .integer(i)
        case .double(let d): message.kind = .double(d)
        case .bool(let b): message.kind = .bool(b)
        case .date(let date): message.kind = .dateMicros(date.microsecondsRounded)
        case .data(let data): message.kind = .data(data)
        case .url(let url): message.kind = .url(url.absoluteString)
        case .uuid(let uuid): message.kind = .uuid(uuid.uuidString)
        case .null: message.kind = .null(true)
        case .array(let values):
            var array = Activitylog_V1_UserInfoArray()
            array.values = values.map(\.proto)
            message.kind = .array(array)
        case .dictionary(let entries): message.kind = .dictionary(Self.protoDictionary(entries))
        }
        return message
    }

    init(proto message: Activitylog_V1_UserInfoValue) throws {
        switch message.kind {
        case .string(let s): self = .string(s)
        case .integer(let i): self = .integer(i)
        case .double(let d): self = .double(d)
        case .bool(let b): self = .bool(b)
        case .dateMicros(let m): self = .date(Date(microseconds: m))
        case .data(let d): self = .data(d)
        case .url(let s):
            guard let url = URL(string: s) else { throw PayloadError("stored URL \"\(s)\" does not parse") }
            self = .url(url)
        case .uuid(let s):
            guard let uuid = UUID(uuidString: s) else { throw PayloadError("stored UUID \"\(s)\" does not parse") }
            self = .uuid(uuid)
        case .null: self = .null
        case .array(let array): self = .array(try array.values.map(UserInfoValue.init(proto:)))
        case .dictionary(let dictionary): self = .dictionary(try Self.dictionary(from: dictionary))
        case nil: throw PayloadError("a userInfo value has no kind")
        }
    }

    static func protoDictionary(_ entries: [Name: UserInfoValue]) -> Activitylog_V1_UserInfoDictionary {
        var dictionary = Activitylog_V1_UserInfoDictionary()
        dictionary.entries = entries.keys.sorted().map { key in
            var entry = Activitylog_V1_UserInfoEntry()
            entry.key = key.string
            entry.value = entries[key]!.proto
            return entry
        }
        return dictionary
    }

    static func dictionary(from message: Activitylog_V1_UserInfoDictionary) throws -> [Name: UserInfoValue] {
        var result: [Name: UserInfoValue] = [:]
        for entry in message.entries { result[Name(entry.key)] = try UserInfoValue(proto: entry.value) }
        return result
    }
}

/// Orders strings by their UTF-8 bytes, as LMDB orders keys: the one order
/// used wherever the store sorts strings, independent of locale
/// (``KeyOrder/precedes(_:_:)``).
@inline(__always)
func utf8Less(_ a: String, _ b: String) -> Bool { KeyOrder.precedes(a, b) }

/// A stored payload or record that does not decode as its schema.
struct PayloadError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
