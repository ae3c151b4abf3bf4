import Crypto
import Foundation
import LMDB

/// A snapshot's bytes: the projections' databases at one position, streamed
/// (memory stays flat however large the views are) and sealed with a SHA-256
/// of everything before it.
///
/// | part | bytes |
/// |---|---|
/// | magic | `ELSNAP01` |
/// | position | 8 |
/// | projection count | 4, then per projection: name (2-byte length ‖ UTF-8), version (4), database count (4), then per database: name (2-byte length ‖ UTF-8) |
/// | per database, in that order | entry count (8), then per entry: key length (4) ‖ key ‖ value length (4) ‖ value |
/// | digest | 32: SHA-256 of all the bytes above |
///
/// All integers big-endian. Written to a temporary name, synced, then renamed,
/// so a snapshot file is whole or absent.
enum SnapshotFile {
    static let magic = Array("ELSNAP01".utf8)

    struct Header: Equatable {
        var position: Position
        var projections: [(name: String, version: UInt32, databases: [String])]

        static func == (lhs: Header, rhs: Header) -> Bool {
            lhs.position == rhs.position && lhs.projections.elementsEqual(rhs.projections) {
                $0.name == $1.name && $0.version == $1.version && $0.databases == $1.databases
            }
        }
    }

    /// Buffered, hashing output to a file.
    final class Writer {
        let handle: FileHandle
        var buffer: [UInt8] = []
        var hasher = SHA256()
        var bytesWritten = 0

        init(path: String) throws {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw EventLogError(.snapshot, operation: "snapshot create", "cannot create \(path)")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            buffer.reserveCapacity(1 << 20)
        }

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
            try handle.write(contentsOf: buffer)
            bytesWritten += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }

        /// Appends the digest, syncs, closes.
        func seal() throws {
            let digest = Array(hasher.finalize())
            buffer.append(contentsOf: digest)
            try drain()
            try handle.synchronize()
            try handle.close()
        }
    }

    /// Buffered, hashing input from a file.
    final class Reader {
        let handle: FileHandle
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
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            size = try handle.seekToEnd()
            try handle.seek(toOffset: 0)
        }

        deinit { try? handle.close() }

        private func fill(_ count: Int) throws {
            if buffer.count - offset >= count { return }
            buffer.removeFirst(offset)
            offset = 0
            while buffer.count < count {
                guard let more = try handle.read(upToCount: max(1 << 20, count)), !more.isEmpty else {
                    throw EventLogError(.snapshot, operation: "snapshot read", "\(path) ends early: it is cut short or damaged")
                }
                buffer.append(contentsOf: more)
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
            guard Array(try read(8)) == SnapshotFile.magic else {
                throw EventLogError(.snapshot, operation: "snapshot read", "\(path) is not a snapshot (bad magic)")
            }
            let position = try read(UInt64.self)
            var projections: [(String, UInt32, [String])] = []
            for _ in 0..<(try read(UInt32.self)) {
                let name = try readString()
                let version = try read(UInt32.self)
                var databases: [String] = []
                for _ in 0..<(try read(UInt32.self)) { databases.append(try readString()) }
                projections.append((name, version, databases))
            }
            return Header(position: position, projections: projections)
        }

        /// Reads the trailing digest and compares it with the bytes read.
        func checkDigest() throws -> Bool {
            let computed = Array(hasher.finalize())
            let stored = Array(try read(32, hashing: false))
            return computed == stored
        }
    }
}
