import LMDB

/// A key of the items' expiration index (item store version 5): the
/// expiration (microseconds since 1970 with the sign bit flipped,
/// big-endian, so that byte order is time order), then the position of the
/// event that wrote the items (u64, big-endian). The value names that
/// event's items with this expiration (``DomainEntry``: u32 byte offsets in
/// the payload, ascending); their space and identifiers are read from the
/// event. One entry per event and expiration: an event's items that share
/// the default expiration of its time cost one key. The time leads, so
/// that `purgeExpired` walks every space's expired items as one range; the
/// position follows, so that a transaction's entries are appended at the
/// end of the tree instead of split into every space's range (full pages,
/// few touched).
///
/// ```swift
/// let key = ExpirationKey(micros: 0, position: 7).encoded
/// // 80 00 00 00 00 00 00 00  00 00 00 00 00 00 00 07
/// ```
struct ExpirationKey: Sendable, Equatable {
    var micros: Int64
    var position: UInt64

    init(micros: Int64, position: UInt64) {
        self.micros = micros
        self.position = position
    }

    /// The 8 bytes of the time: every key before a time sorts before these bytes.
    static func timeBytes(_ micros: Int64) -> [UInt8] {
        BigEndian.bytes(of: UInt64(bitPattern: micros) ^ (1 << 63))
    }

    var encoded: [UInt8] {
        var key = Self.timeBytes(micros)
        BigEndian.append(position, to: &key)
        return key
    }

    /// A stored key read back; nil when it is not 16 bytes.
    init?<C: Collection>(decoding key: C) where C.Element == UInt8 {
        let key = Array(key)
        guard key.count == 16, let time = BigEndian.value(UInt64.self, of: key[0..<8]),
              let position = BigEndian.value(UInt64.self, of: key[8..<16]) else { return nil }
        micros = Int64(bitPattern: time ^ (1 << 63))
        self.position = position
    }
}
