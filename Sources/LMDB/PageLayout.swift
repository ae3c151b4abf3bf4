/// LMDB 0.9's on-disk layout (`mdb.c`, 64-bit build), for the code that
/// reads pages without LMDB: the page check on open (``PageCheck``) and
/// the stale-byte zeroing of a compaction.
///
/// A page starts with a 16-byte header (`MDB_page`): `mp_pgno` (8 bytes),
/// `mp_pad` (2), `mp_flags` (2), then `mp_lower` and `mp_upper` (2 each) or,
/// on the first page of an overflow run, `mp_pages` (4). A branch or leaf
/// page's node offsets (`mp_ptrs`, 2 bytes each) follow the header up to
/// `mp_lower`; its nodes lie from `mp_upper` to the page's end. A node
/// (`MDB_node`) is `mn_lo`, `mn_hi`, `mn_flags`, `mn_ksize` (2 bytes each),
/// then the key, then (on a leaf) the value or, with `F_BIGDATA`, the
/// 8-byte number of the value's overflow page. A branch node's child page
/// number is `mn_lo | mn_hi << 16 | mn_flags << 32`; a leaf node's value
/// size `mn_lo | mn_hi << 16`.
enum PageLayout {
    static let headerSize = 16                      // PAGEHDRSZ
    static let nodeHeaderSize = 8                   // NODESIZE
    static let pointerSize = 2                      // sizeof(indx_t)

    // mp_flags
    static let branch: UInt16 = 0x01                // P_BRANCH
    static let leaf: UInt16 = 0x02                  // P_LEAF
    static let overflow: UInt16 = 0x04              // P_OVERFLOW
    static let meta: UInt16 = 0x08                  // P_META
    static let dirty: UInt16 = 0x10                 // P_DIRTY
    static let leaf2: UInt16 = 0x20                 // P_LEAF2 (MDB_DUPFIXED)
    static let subPage: UInt16 = 0x40               // P_SUBP (MDB_DUPSORT's inline pages)

    // mn_flags of a leaf node
    static let bigData: UInt16 = 0x01               // F_BIGDATA: the value is on overflow pages
    static let subData: UInt16 = 0x02               // F_SUBDATA: the value is an MDB_db
    static let dupData: UInt16 = 0x04               // F_DUPDATA: the value holds duplicates

    // md_flags of a database
    static let reverseKey: UInt16 = 0x02            // MDB_REVERSEKEY
    static let dupSort: UInt16 = 0x04               // MDB_DUPSORT
    static let integerKey: UInt16 = 0x08            // MDB_INTEGERKEY
    static let dupFixed: UInt16 = 0x10              // MDB_DUPFIXED
    static let integerDup: UInt16 = 0x20            // MDB_INTEGERDUP
    static let reverseDup: UInt16 = 0x40            // MDB_REVERSEDUP
    static let persistentFlags: UInt16 = 0x7E       // PERSISTENT_FLAGS

    /// `MDB_db`, a database's record: `md_pad` (4 bytes; the page size in
    /// the free database's record of a meta page), `md_flags` (2),
    /// `md_depth` (2), page and entry counts (8 each), `md_root` (8) at 40.
    static let databaseRecordSize = 48
    static let emptyRoot = UInt64.max               // P_INVALID

    /// `MDB_meta`, after the meta page's header: `mm_magic`, `mm_version`
    /// (4 each), `mm_address`, `mm_mapsize` (8 each), the free and main
    /// databases' records (48 each), `mm_last_pg`, `mm_txnid` (8 each).
    static let metaMagic: UInt32 = 0xBEEF_C0DE       // MDB_MAGIC
    static let dataVersion: UInt32 = 1              // MDB_DATA_VERSION
    static let metaFreeDatabase = headerSize + 24
    static let metaMainDatabase = headerSize + 72
    static let metaLastPage = headerSize + 120
    static let metaTransaction = headerSize + 128
    static let metaSize = headerSize + 136           // sizeof(MDB_metabuf)

    /// The deepest tree LMDB walks (`CURSOR_STACK`).
    static let maxDepth = 32
    /// LMDB's largest page size (`MAX_PAGESIZE`).
    static let maxPageSize = 0x8000
}
