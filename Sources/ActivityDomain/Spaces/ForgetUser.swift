import EventLog
import LMDB

/// `forgetUser`'s record in the log: the engine's ``RedactionRecord`` whose
/// context is a protobuf message with the forgotten user in field 15
/// (`string user = 15`, as in every event of schema version 2), so that
/// ``EventSpace/scanUser(_:type:position:)`` reads it.
///
/// ```swift
/// try batch.redact(positions, context: ForgetUser.context(user: "alice"))
/// try ForgetUser.user(of: recorded)   // "alice"
/// ```
enum ForgetUser {
    /// The redaction record's context for `user`.
    static func context(user: String) -> [UInt8] {
        var w = ByteWriter(capacity: 2 + user.utf8.count)
        w.byte(UInt8(EventSpace.userField << 3 | 2))
        w.string(user)
        return w.bytes
    }

    /// The user a redaction record forgot; nil for another kind of event or
    /// a redaction that names no user.
    static func user(of event: RecordedEvent) throws -> String? {
        guard event.type == RedactionRecord.type, !event.isRedacted else { return nil }
        let record: RedactionRecord
        do { record = try RedactionRecord(payload: event.payload) } catch {
            throw PayloadError("\(RedactionRecord.type) at position \(event.position): \(error)")
        }
        return try user(context: record.context, at: event.position)
    }

    /// Whether `event` is a redaction record forgetting the user named by
    /// these UTF-8 bytes (compared as bytes).
    static func forgets(_ event: RecordedEvent, user: [UInt8]) throws -> Bool {
        guard event.type == RedactionRecord.type, !event.isRedacted, !user.isEmpty else { return false }
        let record: RedactionRecord
        do { record = try RedactionRecord(payload: event.payload) } catch {
            throw PayloadError("\(RedactionRecord.type) at position \(event.position): \(error)")
        }
        return try record.context.withUnsafeBytes {
            try EventSpace.scanUserBytes($0, type: RedactionRecord.type, position: event.position) { $0.elementsEqual(user) }
        }
    }

    /// The user a redaction record's context names; nil for none.
    static func user(context: [UInt8], at position: Position) throws -> String? {
        let user = try context.withUnsafeBytes {
            try EventSpace.scanUser($0, type: RedactionRecord.type, position: position)
        }
        return user.isEmpty ? nil : user
    }
}
