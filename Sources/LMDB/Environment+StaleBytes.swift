import CLMDB
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Environment {
    /// Zeroes, in the data file open as `descriptor` (this environment's
    /// file, a compaction's copy before it is synced), every byte that is
    /// not data in use: the rest of each value's last overflow page, and the
    /// free middle (`mp_lower` … `mp_upper`) of every branch and leaf page.
    /// Returns how many bytes it zeroed.
    ///
    /// Why: LMDB leaves old bytes in both places, and `mdb_env_copyfd2` with
    /// `MDB_CP_COMPACT` does not clear them. A value too large for a leaf
    /// page (over about 2 KB with 4 KB pages) lives on overflow pages of its
    /// own, written whole: a one-page one gets a page buffer recycled from an
    /// earlier commit of the same process (`mdb_page_malloc` zeroes only
    /// fresh buffers), and a value rewritten shorter in one transaction keeps
    /// the longer one's end, so its tail can hold any page the process wrote
    /// before, a forgotten user's included. The copy takes overflow pages
    /// whole, tails too. Branch and leaf pages it copies by their used parts
    /// only, but into a write buffer it reuses every 2 MiB without clearing:
    /// the free middle of a copied page holds what the buffer held, often an
    /// overflow page's stale tail. Measured on the corpus after forgetting a
    /// user: 25 of 200 sampled identifiers of the user were still in the
    /// compacted file, in overflow tails; with tails zeroed, 1 of 500, in a
    /// leaf page's free middle; with both, none.
    ///
    /// How, on LMDB 0.9's page layout (`mdb.c`: `MDB_page` is `mp_pgno` 8
    /// bytes, `mp_pad` 2, `mp_flags` 2, then `mp_lower` and `mp_upper` 2
    /// each, or `mp_pages` 4 on an overflow page; `PAGEHDRSZ` 16; `P_BRANCH`
    /// 0x01, `P_LEAF` 0x02, `P_OVERFLOW` 0x04, `P_META` 0x08, `P_LEAF2`
    /// 0x20):
    /// - every entry of every named database is visited (`mdb_cursor_get`);
    ///   a value that starts right after a page header, which no value on a
    ///   leaf page can (its node header and key come first), is on an
    ///   overflow page: its page number and count are read there, checked,
    ///   and the rest of its last page is written with zeros (`pwrite`);
    /// - then the file is read page by page (`pread`, 1 MiB at a time), each
    ///   overflow run skipped, and the free middle of each branch and leaf
    ///   page zeroed in the buffer, which is written back (`pwrite`) when it
    ///   changed. `P_LEAF2` pages (`MDB_DUPFIXED`, which this package does
    ///   not use) pack keys differently and are left as they are.
    func zeroStaleBytes(writingTo descriptor: Int32, file: String) throws -> Int {
        try zeroOverflowTails(writingTo: descriptor, file: file) + zeroPageGaps(writingTo: descriptor, file: file)
    }

    /// Zeroes the rest of each overflow value's last page (see ``zeroStaleBytes(writingTo:file:)``).
    private func zeroOverflowTails(writingTo descriptor: Int32, file: String) throws -> Int {
        let pageSize = info().pageSize
        var size = stat()
        guard fstat(descriptor, &size) == 0 else { throw LMDBError(code: errno, call: "fstat(\(file))") }
        let zeros = [UInt8](repeating: 0, count: pageSize)
        var zeroed = 0
        try read { txn in
            for name in try txn.databaseNames() {
                let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
                let cursor = try db.cursor(in: txn)
                var entry = try cursor.firstBytes()
                while let (_, value) = entry {
                    if let start = value.baseAddress, Int(bitPattern: start) % pageSize == Self.pageHeaderSize {
                        zeroed += try zeroTail(of: value, start: start, pageSize: pageSize, fileSize: Int(size.st_size),
                                               zeros: zeros, descriptor: descriptor, file: file, database: name)
                    }
                    entry = try cursor.nextBytes()
                }
            }
        }
        return zeroed
    }

    /// LMDB 0.9's page header size (`PAGEHDRSZ`) and page flags (``PageLayout``).
    private static let pageHeaderSize = PageLayout.headerSize
    private static let branchFlag = PageLayout.branch, leafFlag = PageLayout.leaf, overflowFlag = PageLayout.overflow,
                       metaFlag = PageLayout.meta, leaf2Flag = PageLayout.leaf2

    private func zeroTail(of value: UnsafeRawBufferPointer, start: UnsafeRawPointer, pageSize: Int, fileSize: Int,
                          zeros: [UInt8], descriptor: Int32, file: String, database: String) throws -> Int {
        let header = start - Self.pageHeaderSize
        let page = Int(header.loadUnaligned(as: UInt64.self))
        let flags = header.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
        let pages = Int(header.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard flags & Self.overflowFlag != 0 else { return 0 }
        let end = (page + pages) * pageSize
        let valueEnd = page * pageSize + Self.pageHeaderSize + value.count
        guard pages > 0, valueEnd <= end, end - valueEnd < pageSize, end <= fileSize else {
            throw LMDBError(code: MDB_CORRUPTED, call: "zeroOverflowTails(\(file))",
                            hint: "a value of \(database) (\(value.count) bytes) names overflow page \(page) × \(pages), past the file or its value")
        }
        let tail = UnsafeRawBufferPointer(start: start + value.count, count: end - valueEnd)
        guard tail.contains(where: { $0 != 0 }) else { return 0 }
        let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, tail.count, off_t(valueEnd)) }
        guard written == tail.count else {
            throw LMDBError(code: written < 0 ? errno : EIO, call: "pwrite(\(file))")
        }
        return tail.count
    }

    /// Zeroes the free middle of every branch and leaf page of the file
    /// (see ``zeroStaleBytes(writingTo:file:)``).
    private func zeroPageGaps(writingTo descriptor: Int32, file: String) throws -> Int {
        let pageSize = info().pageSize
        let reader = open(file, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw LMDBError(code: errno, call: "open(\(file))") }
        defer { Glibc.close(reader) }
        let chunkPages = max(1, (1 << 20) / pageSize)
        var buffer = [UInt8](repeating: 0, count: chunkPages * pageSize)
        var zeroed = 0
        var offset = 0
        var skip = 0   // pages left of an overflow run
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(reader, $0.baseAddress, $0.count, off_t(offset)) }
            guard count >= 0 else { throw LMDBError(code: errno, call: "pread(\(file))") }
            let pages = count / pageSize
            if pages == 0 { break }
            var changed = false
            try buffer.withUnsafeMutableBytes { chunk in
                for index in 0..<pages {
                    if skip > 0 { skip -= 1; continue }
                    let page = chunk.baseAddress! + index * pageSize
                    let flags = page.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
                    if flags & Self.overflowFlag != 0 {
                        skip = max(0, Int(page.loadUnaligned(fromByteOffset: 12, as: UInt32.self)) - 1)
                        continue
                    }
                    guard flags & (Self.branchFlag | Self.leafFlag) != 0, flags & (Self.metaFlag | Self.leaf2Flag) == 0 else { continue }
                    let lower = Int(page.loadUnaligned(fromByteOffset: 12, as: UInt16.self))
                    let upper = Int(page.loadUnaligned(fromByteOffset: 14, as: UInt16.self))
                    guard Self.pageHeaderSize <= lower, lower <= upper, upper <= pageSize else {
                        throw LMDBError(code: MDB_CORRUPTED, call: "zeroStaleBytes(\(file))",
                                        hint: "page \(offset / pageSize + index) has free space \(lower)…\(upper), outside the page")
                    }
                    let gap = UnsafeMutableRawBufferPointer(start: page + lower, count: upper - lower)
                    if gap.contains(where: { $0 != 0 }) {
                        gap.initializeMemory(as: UInt8.self, repeating: 0)
                        zeroed += gap.count
                        changed = true
                    }
                }
            }
            if changed {
                let length = pages * pageSize
                let written = buffer.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, length, off_t(offset)) }
                guard written == length else { throw LMDBError(code: written < 0 ? errno : EIO, call: "pwrite(\(file))") }
            }
            offset += pages * pageSize
            if count < buffer.count { break }
        }
        return zeroed
    }
}
