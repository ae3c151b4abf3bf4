import LMDB
import SwiftProtobuf

/// Protocol Buffers messages as LMDB values: the projections store their
/// records this way (see `Schema/activity.proto`, "Projection records").
extension Database where Value == [UInt8] {
    func message<M: SwiftProtobuf.Message>(_ key: Key, as type: M.Type = M.self, in txn: ReadTransaction) throws -> M? {
        try withValue(forKey: key, in: txn) { bytes in try M(serializedBytes: [UInt8](bytes)) }
    }

    func put<M: SwiftProtobuf.Message>(message: M, forKey key: Key, in txn: WriteTransaction) throws {
        // No maps in the schema: serialization is deterministic byte for byte.
        let bytes: [UInt8] = try message.serializedBytes()
        try put(bytes, forKey: key, in: txn)
    }
}

/// The first `limit` UTF-8 bytes of a string: the part of a long identifier
/// that goes into an index key (LMDB keys are at most 511 bytes). Lookups
/// compare the full identifier kept in the record.
func keyPrefix(_ identifier: String, limit: Int) -> [UInt8] {
    // Through the contiguous bytes: `utf8.prefix` walks the view generically (~2,500 instructions a key).
    var identifier = identifier
    return identifier.withUTF8 { Array($0.prefix(limit)) }
}
