import Crypto
import Foundation

/// The bytes of a log record, format 1. `Docs/LogFormat.md` is the same
/// table in prose; the two change together.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | format, 1 |
/// | 1 | 1 | flags: bit 0 = payload redacted |
/// | 2 | 2 | T, the type's UTF-8 length |
/// | 4 | 4 | schema version |
/// | 8 | 8 | append time, µs since 1970 UTC, signed |
/// | 16 | 4 | P, the payload's length |
/// | 20 | 32 | SHA-256 of the payload |
/// | 52 | 32 | link |
/// | 84 | T | type, UTF-8 |
/// | 84+T | P | payload |
/// | 84+T+P | 4 | CRC-32C of bytes 0 ..< 84+T+P |
///
/// All integers big-endian. The link of record `n` is
/// `SHA-256(link(n-1) ‖ n as 8 bytes ‖ schema version ‖ append time ‖ payload digest ‖ type)`,
/// with 32 zero bytes as the link before record 1. It covers the payload's
/// digest and not the payload, so a payload can be redacted without breaking
/// the chain.
enum RecordLayout {
    static let format: UInt8 = 1
    static let headerSize = 84
    static let checksumSize = 4
    static let digestSize = 32
    static let redactedFlag: UInt8 = 1
    static let maxTypeLength = 255
    static let zeroLink = [UInt8](repeating: 0, count: 32)

    static func size(typeLength: Int, payloadLength: Int) -> Int {
        headerSize + typeLength + payloadLength + checksumSize
    }

    /// The chain link of a record at `position`.
    static func link(previous: UnsafeRawBufferPointer, position: Position, schemaVersion: UInt32,
                     micros: Int64, payloadDigest: UnsafeRawBufferPointer, type: UnsafeRawBufferPointer) -> SHA256.Digest {
        var hasher = SHA256()
        hasher.update(bufferPointer: previous)
        withUnsafeBytes(of: position.bigEndian) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: schemaVersion.bigEndian) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: micros.bigEndian) { hasher.update(bufferPointer: $0) }
        hasher.update(bufferPointer: payloadDigest)
        hasher.update(bufferPointer: type)
        return hasher.finalize()
    }

    /// Writes a whole record into `out` (exactly `size(…)` bytes) and returns its link.
    static func encode(into out: UnsafeMutableRawBufferPointer, position: Position, type: UnsafeRawBufferPointer,
                       schemaVersion: UInt32, micros: Int64, payload: UnsafeRawBufferPointer,
                       previousLink: UnsafeRawBufferPointer) -> [UInt8] {
        let t = type.count, p = payload.count
        out[0] = format
        out[1] = 0
        out.storeBytes(of: UInt16(t).bigEndian, toByteOffset: 2, as: UInt16.self)
        out.storeBytes(of: schemaVersion.bigEndian, toByteOffset: 4, as: UInt32.self)
        out.storeBytes(of: micros.bigEndian, toByteOffset: 8, as: Int64.self)
        out.storeBytes(of: UInt32(p).bigEndian, toByteOffset: 16, as: UInt32.self)
        let digest = SHA256.hash(data: payload)
        digest.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[20..<52]).copyMemory(from: $0) }
        let link = digest.withUnsafeBytes { d in
            Self.link(previous: previousLink, position: position, schemaVersion: schemaVersion,
                      micros: micros, payloadDigest: d, type: type)
        }
        link.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[52..<84]).copyMemory(from: $0) }
        if t > 0 { UnsafeMutableRawBufferPointer(rebasing: out[84..<(84 + t)]).copyMemory(from: type) }
        if p > 0 { UnsafeMutableRawBufferPointer(rebasing: out[(84 + t)..<(84 + t + p)]).copyMemory(from: payload) }
        let end = 84 + t + p
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: out[0..<end]))
        out.storeBytes(of: crc.bigEndian, toByteOffset: end, as: UInt32.self)
        return Array(link)
    }

    /// The parts of a stored record, read without checking them.
    struct View {
        let bytes: UnsafeRawBufferPointer

        /// Whether the lengths fit the value: the first check of a record.
        var isWellFormed: Bool {
            bytes.count >= RecordLayout.headerSize + RecordLayout.checksumSize
                && bytes[0] == RecordLayout.format
                && bytes.count == RecordLayout.size(typeLength: typeLength, payloadLength: payloadLength)
        }

        var flags: UInt8 { bytes[1] }
        var isRedacted: Bool { flags & RecordLayout.redactedFlag != 0 }
        var typeLength: Int { Int(UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self))) }
        var schemaVersion: UInt32 { UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) }
        var micros: Int64 { Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: Int64.self)) }
        var payloadLength: Int { Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self))) }
        var payloadDigest: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[20..<52]) }
        var link: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[52..<84]) }
        var type: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[84..<(84 + typeLength)]) }
        var payload: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[(84 + typeLength)..<(84 + typeLength + payloadLength)])
        }
        var storedChecksum: UInt32 {
            UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self))
        }
        var computedChecksum: UInt32 { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 4)])) }

        func event(at position: Position) -> RecordedEvent {
            RecordedEvent(
                position: position,
                type: String(decoding: type, as: UTF8.self),
                schemaVersion: schemaVersion,
                appendedAt: Date(microsecondsSince1970: micros),
                appendedAtMicroseconds: micros,
                payload: [UInt8](payload),
                payloadDigest: [UInt8](payloadDigest),
                link: [UInt8](link),
                isRedacted: isRedacted
            )
        }
    }
}
