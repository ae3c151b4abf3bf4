import LMDB

/// Reads a protobuf message's fields by the wire format's rules (varint
/// tags, four wire types) without decoding their values: what finds one
/// field of a payload (``EventSpace``'s user) or where a nested message's
/// bytes are (``ItemSlices``) without decoding the whole message.
///
/// ```swift
/// var reader = WireReader(bytes: payload, from: 0, to: payload.count)
/// while let field = try reader.next() {
///     if field.number == 15 { … payload[field.value] … }
/// }
/// ```
struct WireReader {
    let bytes: UnsafeRawBufferPointer
    /// The message's bytes up to `end`, read with the byte kit (its varints: ``Varint``).
    private var reader: ByteReader
    let end: Int

    /// Where the next field starts.
    var offset: Int { reader.offset }

    /// Bytes that do not follow the wire format; `offset` is where reading stopped.
    struct Malformed: Error {
        var offset: Int
    }

    struct Field {
        var number: UInt64
        /// 0 varint, 1 fixed 64 bits, 2 length-delimited, 5 fixed 32 bits.
        var wireType: UInt8
        /// The value of a varint field (0 for the other wire types).
        var varint: UInt64
        var isLengthDelimited: Bool { wireType == 2 }
        /// The value's bytes (for a length-delimited field, without its
        /// length; for a varint, its encoded bytes).
        var value: Range<Int>
    }

    /// Reads `bytes[start..<end]`.
    init(bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) {
        self.bytes = bytes
        reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[0..<end]), offset: start)
        self.end = end
    }

    /// The next field, or nil at the end.
    mutating func next() throws -> Field? {
        guard reader.offset < end else { return nil }
        do {
            let tag = try reader.varint()
            let length: Int
            switch tag & 7 {
            case 0:
                let start = reader.offset
                let value = try reader.varint()
                return Field(number: tag >> 3, wireType: 0, varint: value, value: start..<reader.offset)
            case 1: length = 8
            case 5: length = 4
            case 2: length = Int(try reader.varint(atMost: UInt64(reader.remaining)))
            default: throw Malformed(offset: reader.offset)
            }
            let start = reader.offset
            _ = try reader.bytes(length)
            return Field(number: tag >> 3, wireType: UInt8(tag & 7), varint: 0, value: start..<reader.offset)
        } catch let error as ByteError {
            throw Malformed(offset: error.offset)
        }
    }
}
