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
    private(set) var offset: Int
    let end: Int

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
        self.offset = start
        self.end = end
    }

    /// The next field, or nil at the end.
    mutating func next() throws -> Field? {
        guard offset < end else { return nil }
        let tag = try varint()
        let length: Int
        switch tag & 7 {
        case 0:
            let start = offset
            let value = try varint()
            return Field(number: tag >> 3, wireType: 0, varint: value, value: start..<offset)
        case 1: length = 8
        case 5: length = 4
        case 2:
            let n = try varint()
            guard n <= UInt64(end - offset) else { throw Malformed(offset: offset) }
            length = Int(n)
        default: throw Malformed(offset: offset)
        }
        guard length <= end - offset else { throw Malformed(offset: offset) }
        let start = offset
        offset += length
        return Field(number: tag >> 3, wireType: UInt8(tag & 7), varint: 0, value: start..<offset)
    }

    private mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end, shift < 64 else { throw Malformed(offset: offset) }
            let byte = bytes[offset]
            offset += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }
}
