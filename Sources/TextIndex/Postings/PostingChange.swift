/// One document's change to a postings key, as a flush collects them.
/// `key` packs block (20 bits), term rank (31 bits), offset (12 bits) and
/// set-or-remove (1 bit), so that sorting the changes sorts them by postings
/// key, then offset, removals first.
struct PostingChange {
    var key: UInt64
    var termId: Int32
    /// Range of the payload in the flush's payload arena; start −1: a removal.
    var payloadStart: Int32
    var payloadEnd: Int32

    var isSet: Bool { payloadStart >= 0 }
    var offset: UInt16 { UInt16(truncatingIfNeeded: (key >> 1) & 0xFFF) }
    /// Block and rank: the postings key.
    var group: UInt64 { key >> 13 }
    var block: UInt32 { UInt32(truncatingIfNeeded: key >> 44) }

    static func key(block: UInt32, rank: Int32, offset: UInt16, isSet: Bool) -> UInt64 {
        UInt64(block) << 44 | UInt64(UInt32(rank)) << 13 | UInt64(offset) << 1 | (isSet ? 1 : 0)
    }
}
