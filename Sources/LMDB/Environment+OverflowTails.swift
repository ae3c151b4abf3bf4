import CLMDB
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Environment {
    /// Zeroes, in the data file open as `descriptor`, the bytes that follow
    /// each value stored on overflow pages, up to the end of its last page;
    /// returns how many bytes it zeroed. For a compaction's copy, before it
    /// is synced.
    ///
    /// Why: LMDB stores a value too large for a leaf page (over about 2 KB
    /// with 4 KB pages) on overflow pages of its own, and writes those pages
    /// whole, tail included. A one-page overflow value gets a page buffer
    /// that LMDB recycles from an earlier commit of the same process
    /// (`mdb_page_malloc` zeroes only fresh buffers), and a value rewritten
    /// shorter in the same transaction keeps the longer one's end: so the
    /// tail can hold any page the process wrote before, a forgotten user's
    /// included. `mdb_env_copyfd2` with `MDB_CP_COMPACT` copies overflow
    /// pages whole, tails too (leaf and branch pages it copies by their used
    /// bytes only). Measured on the corpus: 25 of 200 sampled identifiers of
    /// a forgotten user were still in the compacted file, every one in an
    /// overflow page's tail.
    ///
    /// How: every entry of every named database is visited (`mdb_cursor_get`);
    /// a value on an overflow page starts right after the page's 16-byte
    /// header (LMDB 0.9's `MDB_page`: `mp_pgno` 8 bytes, `mp_pad` 2,
    /// `mp_flags` 2 with `P_OVERFLOW` = 0x04, `mp_pages` 4), which no value
    /// on a leaf page can (its node header and key come first), so the page
    /// number and page count are read there, checked, and the tail is
    /// written with zeros (`pwrite`) where it is not zero already.
    func zeroOverflowTails(writingTo descriptor: Int32, file: String) throws -> Int {
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

    /// LMDB 0.9's page header (`PAGEHDRSZ`) and overflow flag (`P_OVERFLOW`).
    private static let pageHeaderSize = 16
    private static let overflowFlag: UInt16 = 0x04

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
}
