import Crypto
import Foundation
import LMDB
#if canImport(Glibc)
import Glibc
#endif

/// A snapshot's bytes: the projections' databases at one position, streamed
/// (memory stays flat however large the views are) and sealed with a SHA-256
/// of everything before it.
///
/// | part | bytes |
/// |---|---|
/// | magic | `ELSNAP02` |
/// | position | 8 |
/// | link | 32: the chain link of the log's record at that position (zero at 0): the history it was built from |
/// | projection count | 4, then per projection: name (2-byte length ‖ UTF-8), version (4), database count (4), then per database: name (2-byte length ‖ UTF-8) |
/// | per database, in that order | entry count (8), then per entry: key length (4) ‖ key ‖ value length (4) ‖ value |
/// | digest | 32: SHA-256 of all the bytes above |
///
/// All integers big-endian. Written to a temporary name, synced, then renamed,
/// so a snapshot file is whole or absent. A snapshot of the first format
/// (`ELSNAP01`, no link) is read, but records no history: it is never used
/// (`Docs/LogFormat.md`, "Snapshots").
enum SnapshotFile {
    static let magic = Array("ELSNAP02".utf8)
    /// The first format: no link after the position.
    static let unlinkedMagic = Array("ELSNAP01".utf8)

    struct Header: Equatable {
        var position: Position
        /// The link of the log's record at ``position``; nil in a snapshot of the first format.
        var link: ChainLink?
        var projections: [(name: String, version: UInt32, databases: [String])]

        static func == (lhs: Header, rhs: Header) -> Bool {
            lhs.position == rhs.position && lhs.link == rhs.link && lhs.projections.elementsEqual(rhs.projections) {
                $0.name == $1.name && $0.version == $1.version && $0.databases == $1.databases
            }
        }
    }

    /// Buffered, hashing output to a new file (`O_EXCL`, mode 0600): the
    /// file's failures (a full disk above all) said as the snapshot's, never
    /// as a Foundation error.
    final class Writer {
        let path: String
        let descriptor: Int32
        var buffer: [UInt8] = []
        var hasher = SHA256()
        var bytesWritten = 0

        init(path: String) throws {
            self.path = path
            do {
                descriptor = try RegularFile.open(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)!
            } catch let error as LMDBError {
                throw SnapshotFile.failure(error, path: path)
            }
            StoreOwner.adopt(path)
            buffer.reserveCapacity(1 << 20)
        }

        deinit { close(descriptor) }

        func write(_ bytes: UnsafeRawBufferPointer) throws {
            hasher.update(bufferPointer: bytes)
            buffer.append(contentsOf: bytes)
            if buffer.count >= 1 << 20 { try drain() }
        }

        func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try write($0) } }
        func write<T: FixedWidthInteger>(_ value: T) throws { try withUnsafeBytes(of: value.bigEndian) { try write($0) } }
        func write(string: String) throws {
            let utf8 = Array(string.utf8)
            try write(UInt16(utf8.count))
            try write(utf8)
        }

        func drain() throws {
            try buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else {
                        throw SnapshotFile.failure(LMDBError(code: count < 0 ? errno : EIO, call: "write(\(path))"), path: path)
                    }
                    offset += count
                }
            }
            bytesWritten += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }

        /// Appends the digest, syncs.
        func seal() throws {
            let digest = Array(hasher.finalize())
            buffer.append(contentsOf: digest)
            try drain()
            guard fsync(descriptor) == 0 else { throw SnapshotFile.failure(LMDBError(code: errno, call: "fsync(\(path))"), path: path) }
        }
    }

    /// A failed call on a snapshot file, as a snapshot error (a full disk said so).
    static func failure(_ error: LMDBError, path: String) -> EventLogError {
        let directory = StorePath.parent(of: path)
        let described = DiskFullError.classify(error, at: directory)
        if let full = described as? DiskFullError {
            return EventLogError(.snapshot, operation: "snapshot create",
                                 "the disk holding \(directory) is full (\(full.underlying)): the snapshot was not written, and nothing of it is left")
        }
        return EventLogError(.snapshot, operation: "snapshot", "\(path): \(error)")
    }

    /// Buffered, hashing input from a file: a regular file only (a FIFO
    /// named like a snapshot is refused, never waited for).
    final class Reader {
        let descriptor: Int32
        var buffer: [UInt8] = []
        var offset = 0
        var hasher = SHA256()
        let path: String
        /// The file's size, and how much of it ``read(_:hashing:)`` has returned:
        /// a length field past the end is damage, not a size to allocate.
        let size: UInt64
        var delivered: UInt64 = 0

        init(path: String) throws {
            self.path = path
            let fd: Int32?
            do {
                fd = try RegularFile.open(path, O_RDONLY)
            } catch let error as NotARegularFileError {
                throw EventLogError(.snapshot, operation: "snapshot read", error.description)
            } catch let error as LMDBError {
                throw EventLogError(.snapshot, operation: "snapshot read", "\(path): \(error)")
            }
            guard let fd else { throw EventLogError(.snapshot, operation: "snapshot read", "\(path) does not exist") }
            descriptor = fd
            var info = stat()
            fstat(fd, &info)
            size = UInt64(max(0, info.st_size))
        }

        deinit { close(descriptor) }

        private func fill(_ count: Int) throws {
            if buffer.count - offset >= count { return }
            buffer.removeFirst(offset)
            offset = 0
            var chunk = [UInt8](repeating: 0, count: max(1 << 20, count))
            while buffer.count < count {
                let got = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else {
                    throw EventLogError(.snapshot, operation: "snapshot read",
                                        got < 0 ? "\(path): read: \(String(cString: strerror(errno)))" : "\(path) ends early: it is cut short or damaged")
                }
                buffer.append(contentsOf: chunk[0..<got])
            }
        }

        /// The next `count` bytes, hashed unless `hashing` is false.
        func read(_ count: Int, hashing: Bool = true) throws -> ArraySlice<UInt8> {
            guard UInt64(count) <= size - delivered else {
                throw EventLogError(.snapshot, operation: "snapshot read", "\(path) ends early: it is cut short or damaged")
            }
            delivered += UInt64(count)
            try fill(count)
            let slice = buffer[offset..<(offset + count)]
            if hashing { slice.withUnsafeBytes { hasher.update(bufferPointer: $0) } }
            offset += count
            return slice
        }

        func read<T: FixedWidthInteger>(_: T.Type) throws -> T {
            let bytes = try read(MemoryLayout<T>.size)
            return bytes.withUnsafeBytes { T(bigEndian: $0.loadUnaligned(as: T.self)) }
        }

        func readString() throws -> String {
            let count = Int(try read(UInt16.self))
            return String(decoding: try read(count), as: UTF8.self)
        }

        func readHeader() throws -> Header {
            let magic = Array(try read(8))
            guard magic == SnapshotFile.magic || magic == SnapshotFile.unlinkedMagic else {
                throw EventLogError(.snapshot, operation: "snapshot read", "\(path) is not a snapshot (bad magic)")
            }
            let position = try read(UInt64.self)
            let link = magic == SnapshotFile.magic ? try read(32).withUnsafeBytes { ChainLink(bytes: $0) } : nil
            var projections: [(String, UInt32, [String])] = []
            for _ in 0..<(try read(UInt32.self)) {
                let name = try readString()
                let version = try read(UInt32.self)
                var databases: [String] = []
                for _ in 0..<(try read(UInt32.self)) { databases.append(try readString()) }
                projections.append((name, version, databases))
            }
            return Header(position: position, link: link, projections: projections)
        }

        /// Reads the trailing digest and compares it with the bytes read.
        func checkDigest() throws -> Bool {
            let computed = Array(hasher.finalize())
            let stored = Array(try read(32, hashing: false))
            return computed == stored
        }
    }
}
