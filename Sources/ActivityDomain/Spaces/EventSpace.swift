import EventLog

/// The user space an event belongs to, read from the payload's field 15
/// without decoding the rest of it (every event of schema version 2 but the
/// store-wide `activityTypes.declared` carries its space there).
///
/// ```swift
/// try EventSpace.user(of: event)   // "alice"; "" for the default space; nil: store-wide or not ours
/// ```
enum EventSpace {
    /// The protobuf field number of `user` in every event message.
    static let userField: UInt64 = 15

    /// The space of `event`: "" for the default space and for every event of
    /// schema version 1; nil for a store-wide event, an event of another
    /// domain, or a redacted one (its payload, and so its space, is gone).
    static func user(of event: RecordedEvent) throws -> String? {
        guard event.type != ActivityEventCatalog.activityTypesDeclared,
              ActivityEventCatalog.types.contains(event.type) || SpotlightEventCatalog.types.contains(event.type),
              !event.isRedacted else { return nil }
        if event.schemaVersion == 1 { return "" }
        return try event.payload.withUnsafeBytes { try scanUser($0, type: event.type, position: event.position) }
    }

    /// Walks the top-level fields of a protobuf message and returns the last
    /// field 15 (proto3: the last one wins), or "" when there is none.
    static func scanUser(_ bytes: UnsafeRawBufferPointer, type: String, position: Position) throws -> String {
        var i = 0
        var user = ""
        func malformed() -> PayloadError {
            PayloadError("\(type) at position \(position): the payload is not a valid protobuf message (at byte \(i))")
        }
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard i < bytes.count, shift < 64 else { throw malformed() }
                let b = bytes[i]
                i += 1
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
        }
        while i < bytes.count {
            let tag = try varint()
            let length: Int
            switch tag & 7 {
            case 0: _ = try varint(); continue
            case 1: length = 8
            case 2:
                let n = try varint()
                guard n <= UInt64(bytes.count - i) else { throw malformed() }
                length = Int(n)
            case 5: length = 4
            default: throw malformed()
            }
            guard length <= bytes.count - i else { throw malformed() }
            if tag >> 3 == userField && tag & 7 == 2 {
                user = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[i..<(i + length)]), as: UTF8.self)
            }
            i += length
        }
        return user
    }
}
