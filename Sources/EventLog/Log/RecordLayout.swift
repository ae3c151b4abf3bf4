import Crypto
import Foundation

/// The bytes of a log record, format 2 (and format 1, which it extends).
/// `Docs/LogFormat.md` is the same table in prose; the two change together.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | format: 2 (1 in records written before compression) |
/// | 1 | 1 | flags: bit 0 = payload redacted, bit 1 = payload compressed (format 2) |
/// | 2 | 2 | T, the type's UTF-8 length |
/// | 4 | 4 | schema version |
/// | 8 | 8 | append time, µs since 1970 UTC, signed |
/// | 16 | 4 | P, the payload's length (as appended, before compression) |
/// | 20 | 32 | SHA-256 of the payload as appended |
/// | 52 | 32 | link |
/// | 84 | T | type, UTF-8 |
/// | 84+T | S | the stored payload: the payload (S = P), or its compressed form (``CompressedPayload``) |
/// | 84+T+S | 4 | CRC-32C of bytes 0 ..< 84+T+S |
///
/// All integers big-endian. The link of record `n` is
/// `SHA-256(link(n-1) ‖ n as 8 bytes ‖ schema version ‖ append time ‖ payload digest ‖ type)`,
/// with 32 zero bytes as the link before record 1. It covers the payload's
/// digest and not the payload, so a payload can be redacted, or stored
/// compressed, without changing the chain.
enum RecordLayout {
    /// The format of the records this version writes.
    static let format: UInt8 = 2
    /// The formats it reads.
    static let formats: ClosedRange<UInt8> = 1...2
    static let headerSize = 84
    static let checksumSize = 4
    static let digestSize = 32
    static let redactedFlag: UInt8 = 1
    /// Format 2: the stored payload is compressed (``CompressedPayload``).
    static let compressedFlag: UInt8 = 2
    static let maxTypeLength = 255

    /// The record's size, for a stored payload of `payloadLength` bytes.
    static func size(typeLength: Int, payloadLength: Int) -> Int {
        headerSize + typeLength + payloadLength + checksumSize
    }

    /// The flags a record of `format` may have set.
    static func allowedFlags(format: UInt8) -> UInt8 {
        format >= 2 ? redactedFlag | compressedFlag : redactedFlag
    }

    /// The chain link of a record at `position`.
    static func link(previous: ChainLink, position: Position, schemaVersion: UInt32,
                     micros: Int64, payloadDigest: UnsafeRawBufferPointer, type: UnsafeRawBufferPointer) -> ChainLink {
        var hasher = SHA256()
        previous.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        var fixed = (position.bigEndian, schemaVersion.bigEndian, micros.bigEndian)
        withUnsafeBytes(of: &fixed.0) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: &fixed.1) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: &fixed.2) { hasher.update(bufferPointer: $0) }
        hasher.update(bufferPointer: payloadDigest)
        hasher.update(bufferPointer: type)
        return ChainLink(hasher.finalize())
    }

    /// Writes a whole record into `out` (exactly `size(typeLength:payloadLength:)`
    /// of the stored payload's bytes) and returns its link. `stored`, when
    /// given, is the payload's compressed form (``CompressedPayload``),
    /// stored in its place; the digest is the payload's either way.
    static func encode(into out: UnsafeMutableRawBufferPointer, position: Position, type: UnsafeRawBufferPointer,
                       schemaVersion: UInt32, micros: Int64, payload: UnsafeRawBufferPointer, stored: UnsafeRawBufferPointer? = nil,
                       previousLink: ChainLink) -> ChainLink {
        let t = type.count
        out[0] = format
        out[1] = stored == nil ? 0 : compressedFlag
        out.storeBytes(of: UInt32(payload.count).bigEndian, toByteOffset: 16, as: UInt32.self)
        let body = stored ?? payload
        let p = body.count
        out.storeBytes(of: UInt16(t).bigEndian, toByteOffset: 2, as: UInt16.self)
        out.storeBytes(of: schemaVersion.bigEndian, toByteOffset: 4, as: UInt32.self)
        out.storeBytes(of: micros.bigEndian, toByteOffset: 8, as: Int64.self)
        var hasher = SHA256()
        hasher.update(bufferPointer: payload)
        ChainLink(hasher.finalize()).copy(to: out, at: 20)
        let link = Self.link(previous: previousLink, position: position, schemaVersion: schemaVersion,
                             micros: micros, payloadDigest: UnsafeRawBufferPointer(rebasing: out[20..<52]), type: type)
        link.copy(to: out, at: 52)
        if t > 0 { UnsafeMutableRawBufferPointer(rebasing: out[84..<(84 + t)]).copyMemory(from: type) }
        if p > 0 { UnsafeMutableRawBufferPointer(rebasing: out[(84 + t)..<(84 + t + p)]).copyMemory(from: body) }
        let end = 84 + t + p
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: out[0..<end]))
        out.storeBytes(of: crc.bigEndian, toByteOffset: end, as: UInt32.self)
        return link
    }

    /// Writes `view`'s record into `out` in format 2 with `stored` (the
    /// compressed form of `payload`) or `payload` itself: header, digest
    /// and link as they were, checksum anew. What `compact` writes.
    static func rewrite(_ view: View, into out: UnsafeMutableRawBufferPointer, payload: UnsafeRawBufferPointer,
                        stored: UnsafeRawBufferPointer?) {
        let t = view.typeLength
        UnsafeMutableRawBufferPointer(rebasing: out[0..<(84 + t)]).copyMemory(from: UnsafeRawBufferPointer(rebasing: view.bytes[0..<(84 + t)]))
        out[0] = format
        out[1] = (view.flags & ~compressedFlag) | (stored == nil ? 0 : compressedFlag)
        out.storeBytes(of: UInt32(payload.count).bigEndian, toByteOffset: 16, as: UInt32.self)
        let body = stored ?? payload
        let end = 84 + t + body.count
        if !body.isEmpty { UnsafeMutableRawBufferPointer(rebasing: out[(84 + t)..<end]).copyMemory(from: body) }
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: out[0..<end]))
        out.storeBytes(of: crc.bigEndian, toByteOffset: end, as: UInt32.self)
    }

    /// The parts of a stored record, read without checking them.
    struct View {
        let bytes: UnsafeRawBufferPointer

        /// Whether the lengths fit the value: the first check of a record.
        /// An uncompressed payload is P bytes; a compressed one at least 1
        /// (``CompressedPayload`` checks the rest when it is read).
        var isWellFormed: Bool {
            guard bytes.count >= RecordLayout.headerSize + RecordLayout.checksumSize,
                  RecordLayout.formats.contains(bytes[0]) else { return false }
            let stored = bytes.count - RecordLayout.headerSize - RecordLayout.checksumSize - typeLength
            guard stored >= 0 else { return false }
            return isCompressed ? stored > 0 && payloadLength > 0 : stored == payloadLength
        }

        var format: UInt8 { bytes[0] }
        var flags: UInt8 { bytes[1] }
        var isRedacted: Bool { flags & RecordLayout.redactedFlag != 0 }
        /// Format 2 and flag bit 1: the stored payload is compressed. (The
        /// bit in a format 1 record is a reserved flag set, which `verify` reports.)
        var isCompressed: Bool { format >= 2 && flags & RecordLayout.compressedFlag != 0 && !isRedacted }
        var typeLength: Int { Int(UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self))) }
        var schemaVersion: UInt32 { UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) }
        var micros: Int64 { Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: Int64.self)) }
        var payloadLength: Int { Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self))) }
        var payloadDigest: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[20..<52]) }
        var link: ChainLink { ChainLink(bytes: UnsafeRawBufferPointer(rebasing: bytes[52..<84])) }
        var type: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[84..<(84 + typeLength)]) }
        /// The payload as stored: the payload itself unless ``isCompressed``
        /// (``LogDictionaries/withPayload(of:at:in:_:)`` reads it either way).
        var storedPayload: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[(84 + typeLength)..<(bytes.count - 4)])
        }
        var storedChecksum: UInt32 {
            UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self))
        }
        var computedChecksum: UInt32 { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 4)])) }

        /// The event with `payload` (what ``LogDictionaries`` read).
        func event(at position: Position, payload: [UInt8]) -> RecordedEvent {
            RecordedEvent(
                position: position,
                type: String(decoding: type, as: UTF8.self),
                schemaVersion: schemaVersion,
                appendedAt: Date(microsecondsSince1970: micros),
                appendedAtMicroseconds: micros,
                payload: payload,
                isRedacted: isRedacted
            )
        }
    }
}

/// A 32-byte link of the hash chain, held inline (no allocation per record).
public struct ChainLink: Sendable, Equatable, CustomStringConvertible {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    /// The link before position 1: 32 zero bytes.
    public static let zero = ChainLink()

    init() {}

    init(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 32)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
    }

    init(_ digest: SHA256.Digest) {
        self.init()
        digest.withUnsafeBytes { d in withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: d) } }
    }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = words
        return try Swift.withUnsafeBytes(of: &copy, body)
    }

    func copy(to out: UnsafeMutableRawBufferPointer, at offset: Int) {
        withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[offset..<(offset + 32)]).copyMemory(from: $0) }
    }

    /// The 32 bytes.
    public var bytes: [UInt8] { withUnsafeBytes { [UInt8]($0) } }

    /// Lower-case hexadecimal, as `Docs/LogFormat.md` and `Scripts/verify_log.py` print it.
    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in bytes { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    public static func == (lhs: ChainLink, rhs: ChainLink) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }
}
