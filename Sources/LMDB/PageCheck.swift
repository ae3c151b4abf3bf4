import CLMDB
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Checks an LMDB data file's structure before LMDB reads it, so that a
/// damaged or cut-short file is an error (``DamagedFileError``) and never a
/// fault, an assertion, a loop or a write into memory that is not LMDB's.
///
/// LMDB trusts its pages: a page past the end of a cut-short file is a
/// SIGBUS when touched, a node offset or size that leaves its page makes it
/// read (and, copying the page in a write, write) past its buffers, a
/// branch page with one key trips an assertion. Checking each page as LMDB
/// reaches it would need hooks LMDB does not have; so every page in use is
/// checked once, when the environment opens, before any other transaction:
///
/// 1. ``header(of:)``, before `mdb_env_open`: both meta pages read with
///    `pread` (never through the map), their magic, version and page size,
///    each in its own slot (its page number, and its transaction id's
///    parity: LMDB writes even transactions to page 0, odd ones to page 1);
///    the file at least two pages long.
/// 2. ``walk(_:file:)``, right after it, in one read transaction: from the
///    newest meta page, every B-tree (the free-page list, the main database
///    and every named database) page by page. Each page is checked to lie
///    inside the file before it is read, to be used once, to be a branch or
///    leaf page at the depth its tree records, with its node offsets and
///    sizes inside it and its keys in order, between the keys of the branch
///    that leads to it; overflow runs, named databases' records and the
///    free list's page numbers are checked likewise, and no free page may
///    be in use.
///
/// Pages written later come from LMDB itself. What it costs: one read of
/// every page in use (`Docs/Reliability.md`, "Damaged files").
enum PageCheck {
    /// The newest meta page of the data file at `file`, from `pread`: nil
    /// for a missing file (LMDB creates one). An empty one is a store cut to
    /// nothing (or one whose creation was killed before LMDB wrote its meta
    /// pages): LMDB would start a new, empty store in it without a word.
    struct Header {
        var pageSize: Int
        var lastPage: UInt64
        var fileSize: Int
        var recordedSize: Int { (Int(clamping: lastPage) &+ 1).multipliedReportingOverflow(by: pageSize).partialValue }
    }

    static func header(of file: String) throws -> Header? {
        // A regular file only: a FIFO would block the open, a device be read as a store.
        let opened: Int32?
        do {
            opened = try RegularFile.open(file, O_RDONLY)
        } catch let error as LMDBError where error.code == EACCES || error.code == EPERM {
            opened = nil   // not readable: LMDB's own open says so
        }
        guard let fd = opened else { return nil }   // missing: LMDB creates it
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw LMDBError(code: errno, call: "fstat(\(file))") }
        let fileSize = Int(info.st_size)
        if fileSize == 0 { throw DamagedFileError(file: file, problem: .cutShort(fileSize: 0, recordedSize: nil, page: nil)) }
        var buffer = [UInt8](repeating: 0, count: PageLayout.metaSize)
        func readMeta(at offset: Int, _ index: Int) throws -> (pageSize: Int, lastPage: UInt64, txnid: UInt64, pageNumber: UInt64) {
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            guard count >= 0 else { throw LMDBError(code: errno, call: "pread(\(file))") }
            guard count == PageLayout.metaSize else {
                throw DamagedFileError(file: file, problem: .cutShort(fileSize: fileSize, recordedSize: nil, page: index))
            }
            return try buffer.withUnsafeBytes { page in
                let flags = page.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
                let magic = page.loadUnaligned(fromByteOffset: PageLayout.headerSize, as: UInt32.self)
                let version = page.loadUnaligned(fromByteOffset: PageLayout.headerSize + 4, as: UInt32.self)
                guard flags & PageLayout.meta != 0, magic == PageLayout.metaMagic else {
                    throw DamagedFileError(file: file, problem: .notAnLMDBFile(
                        "page \(index) is not an LMDB meta page (flags 0x\(String(flags, radix: 16)), magic 0x\(String(magic, radix: 16)))"))
                }
                guard version == PageLayout.dataVersion else {
                    throw DamagedFileError(file: file, problem: .notAnLMDBFile(
                        "meta page \(index) has format version \(version); this LMDB reads version \(PageLayout.dataVersion)"))
                }
                let pageSize = Int(page.loadUnaligned(fromByteOffset: PageLayout.metaFreeDatabase, as: UInt32.self))
                let lastPage = page.loadUnaligned(fromByteOffset: PageLayout.metaLastPage, as: UInt64.self)
                let txnid = page.loadUnaligned(fromByteOffset: PageLayout.metaTransaction, as: UInt64.self)
                return (pageSize, lastPage, txnid, page.loadUnaligned(as: UInt64.self))
            }
        }
        // LMDB writes transaction N's meta page into slot N & 1 (page 0 for
        // even ids, page 1 for odd ones; both hold 0 when the file is new),
        // and a reader takes the meta page of the slot its transaction id
        // names (`mdb_txn_renew0`: `me_metas[txnid & 1]`). A meta page in
        // the other's slot (the two swapped, one copied over the other)
        // would be read as another commit: an older one, or none, and
        // the next write would go on from there over what was acknowledged.
        func checkSlot(_ meta: (pageSize: Int, lastPage: UInt64, txnid: UInt64, pageNumber: UInt64), _ index: Int) throws {
            guard meta.pageNumber == UInt64(index) else {
                throw DamagedFileError(file: file, problem: .damagedPage(page: index, detail: "meta page \(index) says it is page \(meta.pageNumber): "
                                                                              + "the meta pages were swapped or moved"))
            }
            guard meta.txnid == 0 || meta.txnid & 1 == UInt64(index) else {
                throw DamagedFileError(file: file, problem: .damagedPage(page: index, detail: "meta page \(index) holds transaction \(meta.txnid), "
                    + "which LMDB writes to meta page \(1 - index) (even transactions to page 0, odd ones to page 1): "
                    + "the meta pages were swapped or moved, and LMDB would read another commit than the newest"))
            }
        }
        let first = try readMeta(at: 0, 0)
        guard first.pageSize >= 256, first.pageSize <= PageLayout.maxPageSize, first.pageSize & (first.pageSize - 1) == 0 else {
            throw DamagedFileError(file: file, problem: .damagedPage(page: 0, detail: "the meta page records a page size of \(first.pageSize)"),
                                   database: nil)
        }
        let second = try readMeta(at: first.pageSize, 1)
        try checkSlot(first, 0)
        try checkSlot(second, 1)
        guard second.pageSize == first.pageSize else {
            throw DamagedFileError(file: file, problem: .damagedPage(page: 1, detail: "the meta page records a page size of \(second.pageSize), "
                                                                          + "meta page 0 one of \(first.pageSize)"))
        }
        let newest = second.txnid > first.txnid ? second : first
        let header = Header(pageSize: first.pageSize, lastPage: newest.lastPage, fileSize: fileSize)
        guard fileSize >= 2 * first.pageSize else {
            throw DamagedFileError(file: file, problem: .cutShort(fileSize: fileSize, recordedSize: header.recordedSize, page: 1))
        }
        return header
    }

    /// Walks every page in use of the open environment `env` (see the type's
    /// comment); `file` is its data file, for messages.
    ///
    /// The pages are read through a mapping of the file of this walk's own
    /// (`mmap`, read-only, as long as the file): LMDB does not say where its
    /// map is. The read transaction holds the snapshot: no writer reuses its
    /// pages meanwhile.
    ///
    /// `begin` begins the read transaction (the environment's own, which
    /// clears stale reader slots and says so when every slot is taken).
    static func walk(_ env: OpaquePointer, file: String, begin: () throws -> OpaquePointer) throws {
        var fd: Int32 = -1
        try check(mdb_env_get_fd(env, &fd), "mdb_env_get_fd(\(file))")
        for _ in 0..<100 {
            let txn = try begin()
            defer { mdb_txn_abort(txn) }
            var status = stat()
            guard fstat(fd, &status) == 0 else { throw LMDBError(code: errno, call: "fstat(\(file))") }
            let fileSize = Int(status.st_size)
            guard let map = mmap(nil, fileSize, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else {
                throw LMDBError(code: errno, call: "mmap(\(file))")
            }
            defer { munmap(map, fileSize) }
            var walker = try Walker(env: env, base: UnsafeRawPointer(map), fileSize: fileSize, txnid: UInt64(mdb_txn_id(txn)), file: file)
            // A writer of another process may have reused the snapshot's
            // meta slot between the begin and the read: begin again.
            guard walker != nil else { continue }
            try walker!.run()
            return
        }
        throw LMDBError(code: MDB_BAD_TXN, call: "checkPages(\(file))", hint: "no meta page matched the read transaction 100 times")
    }
}

/// One walk over the trees of one read transaction's snapshot (``PageCheck``).
private struct Walker {
    let base: UnsafeRawPointer
    let pageSize: Int
    /// Pages the snapshot may use: `mm_last_pg + 1`.
    let pageCount: UInt64
    let fileSize: Int
    let file: String
    let recordedSize: Int
    /// The snapshot's meta page (`MDB_meta`), copied: a writer of another
    /// process may write over the slot two commits on.
    let meta: [UInt8]
    /// One bit a page: in use (reached) …
    var used: [UInt64]
    /// … and listed as free.
    var free: [UInt64]

    /// A B-tree being walked: its name for messages, its flags and, for
    /// `MDB_DUPFIXED` data, the fixed size.
    struct Tree {
        var name: String
        var flags: UInt16
        var fixedSize: Int
        var isFreeList = false
        var isMain = false
        var checksOrder = true
    }

    /// Nil when neither meta page holds transaction `txnid` (it was reused).
    init?(env: OpaquePointer, base: UnsafeRawPointer, fileSize: Int, txnid: UInt64, file: String) throws {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        self.base = base
        self.fileSize = fileSize
        self.file = file
        var environmentStatus = MDB_stat()
        mdb_env_stat(env, &environmentStatus)
        pageSize = Int(environmentStatus.ms_psize)
        var slot: UnsafeRawPointer?
        for index in 0..<2 {
            let page = base + index * pageSize
            if page.loadUnaligned(fromByteOffset: PageLayout.metaTransaction, as: UInt64.self) == txnid { slot = page }
        }
        guard let slot else { return nil }
        // Copied, then the slot must still hold this transaction and no
        // second commit may have come since (its meta page goes into this
        // slot): else the copy may mix two, and the walk begins again.
        meta = Array(UnsafeRawBufferPointer(start: slot, count: PageLayout.metaSize))
        mdb_env_info(env, &info)
        guard slot.loadUnaligned(fromByteOffset: PageLayout.metaTransaction, as: UInt64.self) == txnid,
              UInt64(info.me_last_txnid) <= txnid + 1 else { return nil }
        let lastPage = meta.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: PageLayout.metaLastPage, as: UInt64.self) }
        recordedSize = (Int(clamping: lastPage) &+ 1).multipliedReportingOverflow(by: pageSize).partialValue
        guard lastPage >= 1, lastPage < UInt64(Int.max / pageSize), Int(lastPage) < info.me_mapsize / pageSize else {
            throw DamagedFileError(file: file, problem: .damagedPage(page: 0, detail: "the meta page records \(lastPage) as its last page"))
        }
        pageCount = lastPage + 1
        used = [UInt64](repeating: 0, count: Int(pageCount + 63) / 64)
        free = used
        Self.set(&used, 0)
        Self.set(&used, 1)
    }

    mutating func run() throws {
        let meta = self.meta
        try meta.withUnsafeBytes { copy in
            let free = copy.baseAddress! + PageLayout.metaFreeDatabase, main = copy.baseAddress! + PageLayout.metaMainDatabase
            try walk(record: free, tree: Tree(name: "free", flags: PageLayout.integerKey, fixedSize: 0, isFreeList: true))
            try walk(record: main, tree: Tree(name: "main", flags: 0, fixedSize: 0, isMain: true))
        }
        for word in used.indices where used[word] & free[word] != 0 {
            let page = word * 64 + (used[word] & free[word]).trailingZeroBitCount
            throw DamagedFileError(file: file, problem: .damagedPage(page: page, detail: "the page is in use and listed as free"),
                                   database: "free")
        }
    }

    // MARK: Trees

    /// Walks the tree whose `MDB_db` record is at `record`.
    mutating func walk(record: UnsafeRawPointer, tree: Tree) throws {
        var tree = tree
        // The free list's record keeps the environment's flags; its keys are transaction ids.
        tree.flags = tree.isFreeList ? PageLayout.integerKey : record.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
        if tree.flags & PageLayout.dupFixed != 0 { tree.fixedSize = Int(record.loadUnaligned(as: UInt32.self)) }
        let depth = Int(record.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
        let root = record.loadUnaligned(fromByteOffset: 40, as: UInt64.self)
        if root == PageLayout.emptyRoot {
            guard depth == 0 else { throw damaged(0, tree, "the database is empty but records depth \(depth)") }
            return
        }
        guard depth >= 1, depth <= PageLayout.maxDepth else {
            throw damaged(Int(clamping: root), tree, "the database records depth \(depth); allowed: 1 to \(PageLayout.maxDepth)")
        }
        try visit(root, levels: depth, tree: tree, isRoot: true, lower: nil, upper: nil)
    }

    /// Checks page `number` of `tree`, `levels` above the leaves (1: a
    /// leaf), whose keys must be at least `lower` and below `upper`.
    mutating func visit(_ number: UInt64, levels: Int, tree: Tree, isRoot: Bool,
                        lower: UnsafeRawBufferPointer?, upper: UnsafeRawBufferPointer?) throws {
        let page = try claim(number, count: 1, tree: tree)
        let pageNumber = Int(number)
        let flags = page.loadUnaligned(fromByteOffset: 10, as: UInt16.self) & ~PageLayout.dirty
        let isLeaf = flags == PageLayout.leaf || flags == PageLayout.leaf | PageLayout.leaf2
        guard page.loadUnaligned(as: UInt64.self) == number else {
            throw damaged(pageNumber, tree, "the page says it is page \(page.loadUnaligned(as: UInt64.self))")
        }
        guard flags == PageLayout.branch || isLeaf else {
            throw damaged(pageNumber, tree, "flags 0x\(String(flags, radix: 16)) where a branch or leaf page must be")
        }
        guard isLeaf == (levels == 1) else {
            throw damaged(pageNumber, tree, isLeaf ? "a leaf page \(levels - 1) levels above the tree's leaves" : "a branch page at the tree's leaf level")
        }
        let keys = try layout(of: page, size: pageSize, flags: flags, tree: tree, pageNumber: pageNumber)
        if flags == PageLayout.branch && keys.count < (tree.isFreeList ? 1 : 2) {
            throw damaged(pageNumber, tree, "a branch page with \(keys.count) key")
        }
        if keys.isEmpty && !isRoot { throw damaged(pageNumber, tree, "an empty page below the root") }
        if flags & PageLayout.leaf2 != 0 { return }   // MDB_DUPFIXED values: no nodes
        // Keys ascend strictly within a page; the first may equal the
        // separator above it (`lower`), none may reach the next one (`upper`).
        var previous = lower
        var preceding: UnsafeRawBufferPointer?
        var previousIsBound = true
        for (index, node) in keys.enumerated() {
            let key = UnsafeRawBufferPointer(start: node + PageLayout.nodeHeaderSize,
                                             count: Int(node.loadUnaligned(fromByteOffset: 6, as: UInt16.self)))
            // A branch's first key is not used: its child holds what sorts below the second.
            let checked = flags == PageLayout.branch && index == 0 ? nil : key
            if let checked, tree.checksOrder {
                if let previous, compare(previous, checked, tree) >= (previousIsBound ? 1 : 0) {
                    throw DamagedFileError(file: file, problem: .keysOutOfOrder(page: pageNumber, previous: Array(previous), key: Array(checked),
                                                                                preceding: preceding.map(Array.init)),
                                           database: tree.name)
                }
                if let upper, compare(checked, upper, tree) >= 0 {
                    throw DamagedFileError(file: file, problem: .keysOutOfOrder(page: pageNumber, previous: Array(checked), key: Array(upper),
                                                                                preceding: previous.map(Array.init)),
                                           database: tree.name)
                }
            }
            if flags == PageLayout.branch {
                let child = UInt64(node.loadUnaligned(as: UInt16.self)) | UInt64(node.loadUnaligned(fromByteOffset: 2, as: UInt16.self)) << 16
                    | UInt64(node.loadUnaligned(fromByteOffset: 4, as: UInt16.self)) << 32
                let next = index + 1 < keys.count
                    ? UnsafeRawBufferPointer(start: keys[index + 1] + PageLayout.nodeHeaderSize,
                                             count: Int(keys[index + 1].loadUnaligned(fromByteOffset: 6, as: UInt16.self)))
                    : upper
                try visit(child, levels: levels - 1, tree: tree, isRoot: false, lower: checked ?? lower, upper: next)
            } else {
                try leafValue(node, key: key, tree: tree, pageNumber: pageNumber)
            }
            if checked != nil {
                preceding = previous
                previous = checked
                previousIsBound = false
            }
        }
    }

    /// The nodes of a branch or leaf page (or of an inline sub-page), after
    /// checking that the header's bounds and every node lie inside its
    /// `size` bytes; none for a `P_LEAF2` page, whose packed keys are checked here.
    func layout(of page: UnsafeRawPointer, size: Int, flags: UInt16, tree: Tree, pageNumber: Int) throws -> [UnsafeRawPointer] {
        let lower = Int(page.loadUnaligned(fromByteOffset: 12, as: UInt16.self))
        let upper = Int(page.loadUnaligned(fromByteOffset: 14, as: UInt16.self))
        guard lower >= PageLayout.headerSize, lower <= upper, upper <= size, (lower - PageLayout.headerSize) % 2 == 0 else {
            throw damaged(pageNumber, tree, "free space \(lower)…\(upper) outside the page's \(size) bytes")
        }
        let count = (lower - PageLayout.headerSize) / PageLayout.pointerSize
        if flags & PageLayout.leaf2 != 0 {
            guard tree.fixedSize > 0, PageLayout.headerSize + count * tree.fixedSize <= size else {
                throw damaged(pageNumber, tree, "\(count) packed values of \(tree.fixedSize) bytes do not fit the page")
            }
            return []
        }
        var nodes: [UnsafeRawPointer] = []
        nodes.reserveCapacity(count)
        for index in 0..<count {
            let offset = Int(page.loadUnaligned(fromByteOffset: PageLayout.headerSize + index * PageLayout.pointerSize, as: UInt16.self))
            guard offset >= upper, offset % 2 == 0, offset + PageLayout.nodeHeaderSize <= size else {
                throw damaged(pageNumber, tree, "node \(index) at offset \(offset), outside the page's nodes (\(upper)…\(size))")
            }
            let node = page + offset
            let keySize = Int(node.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
            var end = offset + PageLayout.nodeHeaderSize + keySize
            if flags & PageLayout.leaf != 0 {
                let nodeFlags = node.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
                end += nodeFlags & PageLayout.bigData != 0 ? 8 : Self.valueSize(node)
            }
            guard end <= size else {
                throw damaged(pageNumber, tree, "node \(index) (\(end - offset) bytes at offset \(offset)) runs past the page's \(size) bytes")
            }
            nodes.append(node)
        }
        return nodes
    }

    static func valueSize(_ node: UnsafeRawPointer) -> Int {
        Int(node.loadUnaligned(as: UInt16.self)) | Int(node.loadUnaligned(fromByteOffset: 2, as: UInt16.self)) << 16
    }

    /// Checks a leaf node's value: an overflow run, a named database's
    /// record, duplicates, or a free-list entry.
    mutating func leafValue(_ node: UnsafeRawPointer, key: UnsafeRawBufferPointer, tree: Tree, pageNumber: Int) throws {
        let nodeFlags = node.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
        let size = Self.valueSize(node)
        var value = node + PageLayout.nodeHeaderSize + key.count
        guard nodeFlags & ~(PageLayout.bigData | PageLayout.subData | PageLayout.dupData) == 0 else {
            throw damaged(pageNumber, tree, "a node with flags 0x\(String(nodeFlags, radix: 16))")
        }
        if nodeFlags & PageLayout.bigData != 0 {
            guard nodeFlags == PageLayout.bigData else { throw damaged(pageNumber, tree, "an overflow value with flags 0x\(String(nodeFlags, radix: 16))") }
            let first = value.loadUnaligned(as: UInt64.self)
            let pages = (size + PageLayout.headerSize + pageSize - 1) / pageSize
            let run = try claim(first, count: 1, tree: tree)
            let runFlags = run.loadUnaligned(fromByteOffset: 10, as: UInt16.self) & ~PageLayout.dirty
            // A value rewritten shorter in place keeps its longer run.
            let recorded = Int(run.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
            guard run.loadUnaligned(as: UInt64.self) == first, runFlags == PageLayout.overflow, recorded >= pages else {
                throw damaged(Int(first), tree, "an overflow run of \(recorded) pages (flags 0x\(String(runFlags, radix: 16))) "
                              + "for a \(size)-byte value of page \(pageNumber), which needs \(pages)")
            }
            if recorded > 1 { _ = try claim(first + 1, count: recorded - 1, tree: tree) }
            value = run + PageLayout.headerSize
        }
        if tree.isFreeList {
            try freePages(value, size: size, pageNumber: pageNumber, tree: tree)
        } else if nodeFlags & PageLayout.dupData != 0 {
            guard tree.flags & PageLayout.dupSort != 0, nodeFlags & PageLayout.bigData == 0 else {
                throw damaged(pageNumber, tree, "duplicates in a database without MDB_DUPSORT")
            }
            let dups = Tree(name: tree.name, flags: Self.duplicateFlags(tree.flags), fixedSize: tree.fixedSize, checksOrder: false)
            if nodeFlags & PageLayout.subData != 0 {
                guard size == PageLayout.databaseRecordSize else { throw damaged(pageNumber, tree, "a \(size)-byte duplicate tree record") }
                try walkDuplicates(record: value, tree: dups, pageNumber: pageNumber)
            } else {
                // An inline sub-page of `size` bytes.
                guard size >= PageLayout.headerSize else { throw damaged(pageNumber, tree, "a \(size)-byte duplicate sub-page") }
                let subFlags = value.loadUnaligned(fromByteOffset: 10, as: UInt16.self) & ~PageLayout.dirty
                guard subFlags & (PageLayout.leaf | PageLayout.subPage) == PageLayout.leaf | PageLayout.subPage,
                      subFlags & ~(PageLayout.leaf | PageLayout.subPage | PageLayout.leaf2) == 0 else {
                    throw damaged(pageNumber, tree, "a duplicate sub-page with flags 0x\(String(subFlags, radix: 16))")
                }
                let nodes = try layout(of: value, size: size, flags: subFlags, tree: dups, pageNumber: pageNumber)
                for sub in nodes where sub.loadUnaligned(fromByteOffset: 4, as: UInt16.self) != 0 {
                    throw damaged(pageNumber, tree, "a duplicate with flags 0x\(String(sub.loadUnaligned(fromByteOffset: 4, as: UInt16.self), radix: 16))")
                }
            }
        } else if nodeFlags & PageLayout.subData != 0 {
            guard tree.isMain, size == PageLayout.databaseRecordSize else {
                throw damaged(pageNumber, tree, "a \(size)-byte database record\(tree.isMain ? "" : " outside the main database")")
            }
            let flags = value.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
            guard flags & ~PageLayout.persistentFlags == 0 else {
                throw damaged(pageNumber, tree, "database \"\(String(decoding: key, as: UTF8.self))\" records flags 0x\(String(flags, radix: 16))")
            }
            try walk(record: value, tree: Tree(name: String(decoding: key, as: UTF8.self), flags: flags, fixedSize: 0))
        }
    }

    mutating func walkDuplicates(record: UnsafeRawPointer, tree: Tree, pageNumber: Int) throws {
        var tree = tree
        let depth = Int(record.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
        let root = record.loadUnaligned(fromByteOffset: 40, as: UInt64.self)
        if tree.flags & PageLayout.dupFixed != 0 { tree.fixedSize = Int(record.loadUnaligned(as: UInt32.self)) }
        guard root != PageLayout.emptyRoot, depth >= 1, depth <= PageLayout.maxDepth else {
            throw damaged(pageNumber, tree, "a duplicate tree with root \(root) and depth \(depth)")
        }
        try visit(root, levels: depth, tree: tree, isRoot: true, lower: nil, upper: nil)
    }

    /// The flags a database's duplicates are kept with (`mdb_xcursor_init1`).
    static func duplicateFlags(_ flags: UInt16) -> UInt16 {
        var dup: UInt16 = 0
        if flags & PageLayout.dupFixed != 0 { dup |= PageLayout.dupFixed }
        if flags & PageLayout.integerDup != 0 { dup |= PageLayout.integerKey }
        if flags & PageLayout.reverseDup != 0 { dup |= PageLayout.reverseKey }
        return dup
    }

    /// A free-list entry (`MDB_IDL`): a count, then that many page numbers,
    /// descending, 8 bytes each.
    mutating func freePages(_ value: UnsafeRawPointer, size: Int, pageNumber: Int, tree: Tree) throws {
        guard size >= 8, size % 8 == 0 else { throw damaged(pageNumber, tree, "a free list of \(size) bytes") }
        let count = value.loadUnaligned(as: UInt64.self)
        guard count <= UInt64(size / 8 - 1) else { throw damaged(pageNumber, tree, "a free list of \(count) pages in \(size) bytes") }
        var previous = UInt64.max
        for index in 0..<Int(count) {
            let page = value.loadUnaligned(fromByteOffset: 8 + index * 8, as: UInt64.self)
            guard page >= 2, page < pageCount, page < previous, !Self.isMarked(free, page) else {
                throw damaged(pageNumber, tree, "a free list naming page \(page) (pages 2 to \(pageCount - 1), each once, descending)")
            }
            Self.set(&free, page)
            previous = page
        }
    }

    // MARK: Pages

    /// The address of page `number`, after checking that it and the
    /// `count - 1` pages after it lie in the snapshot and the file and are
    /// not used elsewhere; marks them used.
    mutating func claim(_ number: UInt64, count: Int, tree: Tree) throws -> UnsafeRawPointer {
        guard number >= 2, number < pageCount, UInt64(count) <= pageCount - number else {
            throw damaged(Int(clamping: number), tree, "a link to page \(number)\(count > 1 ? " (and \(count - 1) after it)" : ""), "
                          + "outside pages 2 to \(pageCount - 1) of the snapshot")
        }
        let end = (Int(number) + count) * pageSize
        guard end <= fileSize else {
            throw DamagedFileError(file: file, problem: .cutShort(fileSize: fileSize, recordedSize: recordedSize, page: Int(number)),
                                   database: tree.name)
        }
        for page in number..<(number + UInt64(count)) {
            guard !Self.isMarked(used, page) else { throw damaged(Int(page), tree, "the page is reached twice") }
            Self.set(&used, page)
        }
        return base + Int(number) * pageSize
    }

    static func set(_ bits: inout [UInt64], _ page: UInt64) { bits[Int(page / 64)] |= 1 << (page % 64) }

    static func isMarked(_ bits: [UInt64], _ page: UInt64) -> Bool { bits[Int(page / 64)] & (1 << (page % 64)) != 0 }

    func damaged(_ page: Int, _ tree: Tree, _ detail: String) -> DamagedFileError {
        DamagedFileError(file: file, problem: .damagedPage(page: page, detail: detail), database: tree.name)
    }

    // MARK: Order

    /// LMDB's key order for `tree`: `memcmp` then length, or native
    /// unsigned integers (`MDB_INTEGERKEY`), or bytes from the end (`MDB_REVERSEKEY`).
    func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, _ tree: Tree) -> Int {
        if tree.flags & PageLayout.integerKey != 0, a.count == b.count, a.count == 8 || a.count == 4 {
            let x = a.count == 8 ? a.loadUnaligned(as: UInt64.self) : UInt64(a.loadUnaligned(as: UInt32.self))
            let y = b.count == 8 ? b.loadUnaligned(as: UInt64.self) : UInt64(b.loadUnaligned(as: UInt32.self))
            return x < y ? -1 : x == y ? 0 : 1
        }
        if tree.flags & PageLayout.reverseKey != 0 {
            for (x, y) in zip(a.reversed(), b.reversed()) where x != y { return x < y ? -1 : 1 }
            return a.count - b.count
        }
        return KeyOrder.compare(a, b)
    }
}
