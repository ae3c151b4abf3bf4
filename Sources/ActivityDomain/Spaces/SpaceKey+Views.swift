import LMDB

/// The shapes of the activity views' keys inside a user space (``SpaceKey``,
/// the byte kit's: the space's id, u32 big-endian, then the key's own
/// bytes). Every key of the activity views that starts with a space is
/// built by ``SpaceKey``, in one of these shapes (`Docs/LogFormat.md`,
/// "Keys of the activity views"), and nowhere by hand:
///
/// | built by | bytes | in |
/// |---|---|---|
/// | `SpaceKey(space:_:)` | space ‖ name | registry, current, saved, items, client states |
/// | `SpaceKey.prefix(of:)` | space | `spaces.byID` |
/// | `SpaceKey(space:position:)` | space ‖ position (u64) | `spaces.events` |
/// | `SpaceKey(space:indexing:limit:of:)` | space ‖ value, cut at `limit` bytes ‖ 0x00 ‖ name | items by domain, saved copies by targetContentIdentifier and webpageURL |
/// | `SpaceKey(space:indexing:limit:position:)` | space ‖ value, cut at `limit` bytes ‖ 0x00 ‖ position (u64) | items by domain |
/// | `SpaceKey(space:tag:_:limit:)` | space ‖ tag byte ‖ name, cut at `limit` bytes | saved-copy removals |
///
/// (The expiration index leads with the time instead: ``ExpirationKey``.)
///
/// ```swift
/// let key = SpaceKey(space: 3, "a1")        // 00 00 00 03 61 31
/// try registry.activities.get(key, in: txn)
/// let entry = SpaceKey(space: 3, indexing: "orders", limit: 250, of: "o1").encoded   // 00 00 00 03 6f 72 64 65 72 73 00 6f 31
/// ```
extension SpaceKey {
    /// An event of the space: space ‖ position, both big-endian.
    init(space: UInt32, position: UInt64) {
        self.init(space: space, capacity: 8)
        append(bigEndian: position)
    }

    /// An index entry: space ‖ the first `limit` UTF-8 bytes of `value` ‖
    /// 0x00 ‖ `name`, the name the value belongs to. The entries of one
    /// value (and of every value it is a prefix of) are one key range
    /// (``indexPrefix(space:_:limit:exact:)``); a value cut at `limit` is compared
    /// in full in the record the name leads to. Values hold no NUL.
    init(space: UInt32, indexing value: String, limit: Int, of name: String) {
        self = SpaceKey.indexPrefix(space: space, value, limit: limit, exact: true).appending(name.utf8)
    }

    /// An index entry whose name is an event's position: space ‖ the first
    /// `limit` UTF-8 bytes of `value` ‖ 0x00 ‖ position (u64, big-endian).
    init(space: UInt32, indexing value: String, limit: Int, position: UInt64) {
        self = SpaceKey.indexPrefix(space: space, value, limit: limit, exact: true).appending(bigEndian: position)
    }

    /// A tagged name: space ‖ `tag` ‖ the first `limit` UTF-8 bytes of `name`.
    init(space: UInt32, tag: UInt8, _ name: String, limit: Int) {
        self.init(space: space, CollectionOfOne(tag))
        append(keyPrefix(name, limit: limit))
    }

    /// The key every index entry of `value` (cut at `limit`) starts with;
    /// `exact` adds the 0x00 that ends the value, so that the range holds
    /// that value's entries alone.
    static func indexPrefix(space: UInt32, _ value: String, limit: Int, exact: Bool) -> SpaceKey {
        var key = SpaceKey(space: space, keyPrefix(value, limit: limit))
        if exact { key.append(CollectionOfOne(0)) }
        return key
    }

    /// The key's own part: the position of a space's event
    /// (``init(space:position:)``); nil for another shape.
    var position: UInt64? { BigEndian.value(UInt64.self, of: rest) }

    /// The key's own part as UTF-8 text.
    var string: String { String(decoding: rest, as: UTF8.self) }
}
