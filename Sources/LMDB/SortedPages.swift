import CLMDB

/// A sorted map of byte keys to short byte values, kept in one LMDB
/// database as front-coded pages of about 64 entries: one LMDB pair a page
/// instead of one a key. Several maps share a database under key prefixes
/// (a space id): `prefix ‖ first key` → the page.
///
/// Where pages begin is a function of the map's set of keys alone, never of
/// the order or grouping of the writes that made it, so that a rebuild
/// writes the same bytes as the live map (`replay --verify`). Walking the
/// keys in order, a key begins a page when
/// - it is the map's smallest; or
/// - it is a *boundary* key: ``isBoundary(_:)``, one in 64 by a fixed hash
///   of its bytes (FNV-1a, 32 bits); or
/// - the page so far, with it, would pass ``pageByteLimit`` bytes (keys
///   chosen to avoid boundaries cannot make one giant page; LMDB keeps a
///   value of this size inline in a leaf, never in overflow pages).
///
/// The keys from one boundary key (or the smallest) to the next form a
/// *run*; a write re-pages only the runs its changes fall in. A run of a
/// few pages only comes from keys built to dodge the hash.
///
/// A page (the value; its first key is the LMDB key after the prefix; the
/// further entries front-coded, ``FrontCoding``):
///
/// ```
/// varint  length of the first entry's value, then the value
/// per further entry, by key:
///   varint  bytes shared with the previous key
///   varint  count of the bytes that follow, then those bytes
///   varint  length of the value, then the value
/// ```
///
/// A lookup is one `MDB_SET_RANGE` (and an `MDB_PREV` unless the key
/// begins its page) and a scan of one page.
///
/// ```swift
/// let ids = SortedPages(try txn.createDatabase("ids"))
/// try ids.apply([(key: Array("order-1".utf8), value: [1])], prefix: [0, 0, 0, 1], in: txn)
/// let value = try ids.withValue(forKey: Array("order-1".utf8), prefix: [0, 0, 0, 1], in: txn) { Array($0) }   // [1]
/// let walk = try ids.walker(prefix: [0, 0, 0, 1], in: txn)
/// var more = try walk.seek(atOrAfter: Array("order-".utf8))
/// while more, walk.key.starts(with: "order-".utf8) { …; more = try walk.next() }
/// ```
public struct SortedPages: Sendable {
    public let database: Database<[UInt8], [UInt8]>

    /// One key in this many begins a run (and so a page).
    public static let boundaryModulus: UInt32 = 64
    /// A page's bytes (value and first key) stay at or under this, unless
    /// one entry alone is larger.
    public static let pageByteLimit = 1_024
    /// LMDB's longest key (`mdb_env_get_maxkeysize`): prefix and key together.
    public static let maximumKeyLength = 511

    public init(_ database: Database<[UInt8], [UInt8]>) {
        self.database = database
    }

    /// Whether `key` begins a run: FNV-1a (32 bits) of its bytes is 0 modulo
    /// ``boundaryModulus``. Fixed forever: stored pages depend on it.
    public static func isBoundary(_ key: some Collection<UInt8>) -> Bool {
        var h: UInt32 = 2_166_136_261
        for b in key { h = (h ^ UInt32(b)) &* 16_777_619 }
        return h % boundaryModulus == 0
    }

    // MARK: Reading

    /// Calls `body` with the value of `key` in the map under `prefix`; nil
    /// when there is none. The bytes live until the transaction ends.
    public func withValue<R>(forKey key: [UInt8], prefix: [UInt8], in txn: ReadTransaction,
                             _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let cursor = try database.cursor(in: txn)
        guard let page = try SortedPages.pageHolding(key, prefix: prefix, cursor) else { return nil }
        return try key.withUnsafeBytes { target in
            try SortedPages.find(target, in: page, prefix: prefix, label: database.label).map { try body($0) }
        }
    }

    /// The value of `target` in `page`, or nil, without rebuilding keys: a
    /// scan keeps how many bytes the current key shares with `target`
    /// (`matched`; the current key sorts before `target`). An entry sharing
    /// more than that with the key before it sorts before `target` too; one
    /// sharing less sorts after it; only one sharing exactly `matched`
    /// needs its bytes compared. Lengths are checked as ``PageReader`` does;
    /// the order of keys is checked where a walk or a write reads the page.
    static func find(_ target: UnsafeRawBufferPointer, in page: Cursor<[UInt8], [UInt8]>.RawEntry, prefix: [UInt8],
                     label: String) throws -> UnsafeRawBufferPointer? {
        var scan = PageScanner(bytes: page.value, pageKey: page.key, label: label)
        guard page.key.count >= prefix.count else { throw scan.damaged("page key outside its map") }
        // The first key (the LMDB key after the prefix) against the target.
        let first = UnsafeRawBufferPointer(rebasing: page.key[prefix.count...])
        var matched = 0
        while matched < first.count && matched < target.count && first[matched] == target[matched] { matched += 1 }
        var keyLength = first.count
        var v = try scan.value()
        if matched < target.count && matched < first.count && first[matched] > target[matched] { return nil }
        while true {
            if matched == target.count { return keyLength == target.count ? v : nil }   // equal, or past it
            guard !scan.atEnd else { return nil }
            let (shared, suffix) = try scan.key(after: keyLength)
            if shared < matched { return nil }   // greater than the key before at a byte where that one equals the target
            if shared == matched {
                var k = 0
                while k < suffix.count && matched < target.count && suffix[k] == target[matched] {
                    k += 1
                    matched += 1
                }
                if k < suffix.count && (matched == target.count || suffix[k] > target[matched]) { return nil }
            }
            keyLength = shared + suffix.count
            v = try scan.value()
        }
    }

    /// A walk over the map under `prefix` in key order.
    public func walker(prefix: [UInt8], in txn: ReadTransaction) throws -> Walker {
        Walker(cursor: try database.cursor(in: txn), prefix: prefix, label: database.label)
    }

    /// An ordered walk over one map: ``seek(atOrAfter:)`` or ``next()``
    /// moves it, then ``key`` and ``value`` are the entry it stands on
    /// (valid until it moves again; the value until the transaction ends).
    public final class Walker {
        let cursor: Cursor<[UInt8], [UInt8]>
        let prefix: [UInt8]
        let label: String
        var reader: PageReader?

        init(cursor: Cursor<[UInt8], [UInt8]>, prefix: [UInt8], label: String) {
            self.cursor = cursor
            self.prefix = prefix
            self.label = label
        }

        /// The current entry's key (the map's key, without the prefix).
        public var key: [UInt8] { reader?.key ?? [] }
        /// The current entry's value.
        public var value: UnsafeRawBufferPointer { reader?.value ?? UnsafeRawBufferPointer(start: nil, count: 0) }

        /// Moves to the first entry whose key is at or after `target`;
        /// false when there is none.
        public func seek(atOrAfter target: [UInt8]) throws -> Bool {
            if let page = try SortedPages.pageHolding(target, prefix: prefix, cursor) {
                reader = try PageReader(page, prefix: prefix, label: label)
            } else {
                // Before the map's first page, or the map is empty.
                guard let first = try (prefix + target).withUnsafeBytes({ try cursor.seekBytes(atOrAfter: $0) }),
                      first.key.starts(with: prefix) else { reader = nil; return false }
                reader = try PageReader(first, prefix: prefix, label: label)
            }
            while reader!.key.lexicographicallyPrecedes(target) {
                guard try next() else { return false }
            }
            return true
        }

        /// Moves to the first entry; false when the map is empty.
        public func first() throws -> Bool { try seek(atOrAfter: []) }

        /// Moves to the next entry; false after the last.
        public func next() throws -> Bool {
            guard reader != nil else { return false }
            if try reader!.next() { return true }
            guard let page = try cursor.nextBytes(), page.key.starts(with: prefix) else {
                reader = nil
                return false
            }
            reader = try PageReader(page, prefix: prefix, label: label)
            return true
        }
    }

    /// The page whose keys would include `key` (the last page whose first
    /// key is at or before it), with `cursor` on it; nil when `key` sorts
    /// before the map's first page or the map is empty.
    static func pageHolding(_ key: [UInt8], prefix: [UInt8], _ cursor: Cursor<[UInt8], [UInt8]>) throws -> Cursor<[UInt8], [UInt8]>.RawEntry? {
        let full = prefix + key
        if let at = try full.withUnsafeBytes({ try cursor.seekBytes(atOrAfter: $0) }) {
            if at.key.elementsEqual(full) { return at }
        } else if let last = try cursor.lastBytes() {
            return last.key.starts(with: prefix) ? last : nil
        } else {
            return nil
        }
        guard let before = try cursor.previousBytes(), before.key.starts(with: prefix) else { return nil }
        return before
    }

    // MARK: Writing

    /// Applies `changes` to the map under `prefix`: each key gets its value,
    /// or is removed when the value is nil (removing an absent key does
    /// nothing). Keys sorted by bytes, each once. Only the runs the changes
    /// fall in are read and written, and a page whose bytes did not change
    /// is not written.
    public func apply(_ changes: [(key: [UInt8], value: [UInt8]?)], prefix: [UInt8], in txn: WriteTransaction) throws {
        for (k, change) in changes.enumerated() {
            guard prefix.count + change.key.count <= SortedPages.maximumKeyLength else {
                throw SortedPagesError(database: database.label, pageKey: prefix + change.key,
                                       problem: "key of \(change.key.count) bytes after a prefix of \(prefix.count): at most \(SortedPages.maximumKeyLength) together")
            }
            guard k == 0 || changes[k - 1].key.lexicographicallyPrecedes(change.key) else {
                throw SortedPagesError(database: database.label, pageKey: prefix + change.key,
                                       problem: "changes not sorted by key, or a key twice")
            }
        }
        let cursor = try database.cursor(in: txn)
        var i = 0
        while i < changes.count {
            // 1. The run the first pending change falls in (the previous
            //    run too when it removes a run's first key: they join).
            var page = try SortedPages.pageHolding(changes[i].key, prefix: prefix, cursor)
            if page == nil {
                // Before the map's first page (its start), or the map is empty.
                page = try (prefix + changes[i].key).withUnsafeBytes { try cursor.seekBytes(atOrAfter: $0) }
                if let p = page, !p.key.starts(with: prefix) { page = nil }
            }
            if let p = page {
                var start = Array(p.key)
                var joinsPrevious = changes[i].value == nil && start.count == prefix.count + changes[i].key.count
                    && start[prefix.count...].elementsEqual(changes[i].key)
                var onStart = true
                while joinsPrevious || !SortedPages.isBoundary(start[prefix.count...]) {
                    joinsPrevious = false
                    guard let before = try cursor.previousBytes(), before.key.starts(with: prefix) else {
                        onStart = false
                        break
                    }
                    start = Array(before.key)
                }
                page = onStart ? try cursor.currentBytes() : try start.withUnsafeBytes { try cursor.seekBytes(exactly: $0) }
            }

            // 2. Its entries, and the following pages' until a run that no
            //    pending change reaches.
            var old: [(key: [UInt8], value: [UInt8])] = []
            var entries = EntryList()
            var j = i
            var current = page
            while let p = current {
                old.append((Array(p.key), Array(p.value)))
                var reader = try PageReader(p, prefix: prefix, label: database.label)
                repeat { entries.append(reader.key, reader.value) } while try reader.next()
                guard let following = try cursor.nextBytes(), following.key.starts(with: prefix) else {
                    j = changes.count
                    break
                }
                let first = following.key[prefix.count...]
                while j < changes.count && changes[j].key.lexicographicallyPrecedes(first) { j += 1 }
                let removesFirst = j < changes.count && changes[j].value == nil && changes[j].key.elementsEqual(first)
                if SortedPages.isBoundary(first) && !removesFirst { break }
                current = following
            }
            if page == nil {
                // An empty map: the changes make all of it.
                j = changes.count
            }

            // 3. Merged, paged again, written where the bytes differ.
            let merged = entries.merged(with: changes[i..<j])
            let pages = SortedPages.paginate(merged, prefix: prefix)
            var oldByKey: [[UInt8]: [UInt8]] = [:]
            for o in old { oldByKey[o.key] = o.value }
            for o in old where !pages.contains(where: { $0.key == o.key }) {
                _ = try database.delete(o.key, in: txn)
            }
            for p in pages where oldByKey[p.key] != p.value {
                try database.put(p.value, forKey: p.key, in: txn)
            }
            i = j
        }
    }

    /// Pages of `entries` (sorted, a run start first): LMDB key and value each.
    static func paginate(_ entries: EntryList, prefix: [UInt8]) -> [(key: [UInt8], value: [UInt8])] {
        var pages: [(key: [UInt8], value: [UInt8])] = []
        var key: [UInt8] = [], value: [UInt8] = []
        var size = 0
        let bytes = entries.bytes
        var previous = 0..<0
        for n in 0..<entries.count {
            let k = entries.keyRange(n), v = entries.valueRange(n)
            let shared = FrontCoding.sharedCount(bytes[previous], bytes[k])
            let entrySize = FrontCoding.entrySize(shared: shared, suffix: k.count - shared, value: v.count)
            if n == 0 || isBoundary(bytes[k]) || size + entrySize > pageByteLimit {
                if n > 0 { pages.append((key, value)) }
                key = prefix + bytes[k]
                value = []
                Varint.append(v.count, to: &value)
                value.append(contentsOf: bytes[v])
                size = k.count + value.count
            } else {
                FrontCoding.appendEntry(shared: shared, suffix: bytes[(k.lowerBound + shared)..<k.upperBound], value: bytes[v], to: &value)
                size += entrySize
            }
            previous = k
        }
        if entries.count > 0 { pages.append((key, value)) }
        return pages
    }

    /// Entries (key, value) in order, in one arena.
    struct EntryList {
        var bytes: [UInt8] = []
        var ends: [(keyEnd: Int, valueEnd: Int)] = []

        var count: Int { ends.count }
        func keyRange(_ n: Int) -> Range<Int> { (n == 0 ? 0 : ends[n - 1].valueEnd)..<ends[n].keyEnd }
        func valueRange(_ n: Int) -> Range<Int> { ends[n].keyEnd..<ends[n].valueEnd }

        mutating func append(_ key: some Collection<UInt8>, _ value: some Collection<UInt8>) {
            bytes.append(contentsOf: key)
            let keyEnd = bytes.count
            bytes.append(contentsOf: value)
            ends.append((keyEnd, bytes.count))
        }

        /// These entries with `changes` (sorted) made: a value set, or the key removed.
        func merged(with changes: ArraySlice<(key: [UInt8], value: [UInt8]?)>) -> EntryList {
            var result = EntryList()
            result.bytes.reserveCapacity(bytes.count + changes.count * 32)
            result.ends.reserveCapacity(count + changes.count)
            var e = 0
            var c = changes.startIndex
            while e < count || c < changes.endIndex {
                if e < count {
                    let key = bytes[keyRange(e)]
                    if c == changes.endIndex || key.lexicographicallyPrecedes(changes[c].key) {
                        result.append(key, bytes[valueRange(e)])
                        e += 1
                        continue
                    }
                    if key.elementsEqual(changes[c].key) { e += 1 }
                }
                if let value = changes[c].value { result.append(changes[c].key, value) }
                c += 1
            }
            return result
        }
    }
}

/// One page decoded entry by entry: ``key`` is rebuilt in place.
struct PageReader {
    var scan: PageScanner
    var key: [UInt8]
    var value = UnsafeRawBufferPointer(start: nil, count: 0)

    init(_ page: Cursor<[UInt8], [UInt8]>.RawEntry, prefix: [UInt8], label: String) throws {
        scan = PageScanner(bytes: page.value, pageKey: page.key, label: label)
        guard page.key.count >= prefix.count, page.key.starts(with: prefix) else {
            throw scan.damaged("page key outside its map")
        }
        key = Array(page.key[prefix.count...])
        key.reserveCapacity(key.count + 32)
        value = try scan.value()
    }

    /// Moves to the next entry of the page; false at its end.
    mutating func next() throws -> Bool {
        guard !scan.atEnd else { return false }
        let (shared, suffix) = try scan.key(after: key.count)
        // Strictly after the previous key: longer with the same start, or greater at the first difference.
        guard shared == key.count || suffix[0] > key[shared] else { throw scan.damaged("keys out of order") }
        key.removeLast(key.count - shared)
        key.append(contentsOf: suffix)
        value = try scan.value()
        return true
    }
}

/// One page's bytes read front to back (``ByteReader``; entries by
/// ``FrontCoding``), each length checked against the page's end and each
/// key against the one before: what ``PageReader`` and ``SortedPages``'
/// lookup share. A struct the caller keeps in a local, so that reading a
/// varint is a few instructions (the lookup's closures over a captured
/// offset cost about 21 K instructions a lookup, most of it access checks).
struct PageScanner {
    var reader: ByteReader
    let pageKey: UnsafeRawBufferPointer
    let label: String

    init(bytes: UnsafeRawBufferPointer, pageKey: UnsafeRawBufferPointer, label: String) {
        reader = ByteReader(bytes)
        self.pageKey = pageKey
        self.label = label
    }

    var atEnd: Bool { reader.isAtEnd }

    /// The next entry's key: the bytes it shares with the key before it (of
    /// `keyLength` bytes), and the 1 or more that follow them.
    @inline(__always)
    mutating func key(after keyLength: Int) throws -> (shared: Int, suffix: UnsafeRawBufferPointer) {
        let entry: (shared: Int, suffix: UnsafeRawBufferPointer)
        do throws(ByteError) { entry = try reader.frontCodedKey() } catch { throw damaged("entry key", error) }
        guard entry.shared <= keyLength, entry.suffix.count >= 1, entry.shared + entry.suffix.count <= SortedPages.maximumKeyLength else {
            throw damaged("entry key (\(entry.shared) bytes shared of \(keyLength), \(entry.suffix.count) more)")
        }
        return entry
    }

    /// A value: its varint length, then its bytes.
    @inline(__always)
    mutating func value() throws -> UnsafeRawBufferPointer {
        do throws(ByteError) { return try reader.lengthPrefixed() } catch { throw damaged("value", error) }
    }

    func damaged(_ problem: String) -> SortedPagesError {
        SortedPagesError(database: label, pageKey: Array(pageKey), problem: "\(problem) at byte \(reader.offset)")
    }

    func damaged(_ what: String, _ error: ByteError) -> SortedPagesError {
        SortedPagesError(database: label, pageKey: Array(pageKey), problem: "\(what): \(error)")
    }
}

/// A page of a ``SortedPages`` map that breaks its format, or a write that
/// it refuses. Names the database and the page's key.
///
/// ```swift
/// catch let error as SortedPagesError { print(error) }   // damaged page in database search.ids, key 00000001 6974656d…: keys out of order at byte 12
/// ```
public struct SortedPagesError: Error, CustomStringConvertible, Sendable {
    public var database: String
    public var pageKey: [UInt8]
    public var problem: String

    public var description: String {
        let hex = pageKey.prefix(32).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        return "damaged page in database \(database), key \(hex)\(pageKey.count > 32 ? "…" : ""): \(problem)"
    }
}
