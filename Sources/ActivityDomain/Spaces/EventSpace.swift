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

    /// Whether `event` belongs to the space named by these UTF-8 bytes,
    /// compared as bytes (two canonically equal names are two users);
    /// false for a store-wide, redacted or foreign event.
    static func belongs(_ event: RecordedEvent, toUser user: [UInt8]) throws -> Bool {
        guard event.type != ActivityEventCatalog.activityTypesDeclared,
              ActivityEventCatalog.types.contains(event.type) || SpotlightEventCatalog.types.contains(event.type),
              !event.isRedacted else { return false }
        if event.schemaVersion == 1 { return user.isEmpty }
        return try event.payload.withUnsafeBytes { try scanUserBytes($0, type: event.type, position: event.position) { $0.elementsEqual(user) } }
    }

    /// Calls `body` with the bytes of the last field 15 of a protobuf
    /// message (empty when there is none) and returns what it says.
    static func scanUserBytes<R>(_ bytes: UnsafeRawBufferPointer, type: String, position: Position,
                                 _ body: (UnsafeRawBufferPointer) -> R) throws -> R {
        var reader = WireReader(bytes: bytes, from: 0, to: bytes.count)
        var user = UnsafeRawBufferPointer(rebasing: bytes[0..<0])
        do {
            while let field = try reader.next() {
                if field.number == userField && field.isLengthDelimited { user = UnsafeRawBufferPointer(rebasing: bytes[field.value]) }
            }
        } catch let error as WireReader.Malformed {
            throw PayloadError("\(type) at position \(position): the payload is not a valid protobuf message (at byte \(error.offset))")
        }
        return body(user)
    }

    /// Walks the top-level fields of a protobuf message and returns the last
    /// field 15 (proto3: the last one wins), or "" when there is none.
    static func scanUser(_ bytes: UnsafeRawBufferPointer, type: String, position: Position) throws -> String {
        var reader = WireReader(bytes: bytes, from: 0, to: bytes.count)
        var user = ""
        do {
            while let field = try reader.next() {
                if field.number == userField && field.isLengthDelimited {
                    // Never U+FFFD for bad bytes: that would be another user's name.
                    guard let name = String(validating: UnsafeRawBufferPointer(rebasing: bytes[field.value]), as: UTF8.self) else {
                        throw PayloadError("\(type) at position \(position): the user is not valid UTF-8")
                    }
                    user = name
                }
            }
        } catch let error as WireReader.Malformed {
            throw PayloadError("\(type) at position \(position): the payload is not a valid protobuf message (at byte \(error.offset))")
        }
        return user
    }
}
