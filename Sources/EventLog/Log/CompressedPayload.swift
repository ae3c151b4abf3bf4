import LMDB

/// The stored form of a compressed payload (format 2, flag bit 1;
/// `Docs/LogFormat.md`, "Compressed payloads"):
///
/// ```
/// varint  D            the dictionary (its key in `dictionaries`); 0: none
/// u8      k            blocks of 2^k bytes of the payload (the last one shorter)
/// varint  × (n - 1)    the stored length of each block but the last (n = ⌈P / 2^k⌉)
/// n zstd frames        one a block, in order
/// ```
///
/// A block decompresses alone, so a reader of a few bytes of a large
/// payload (an item of a batch) decompresses the blocks that hold them and
/// no more.
///
/// ```swift
/// let stored = try CompressedPayload.encode(payload, dictionary: current)   // nil: not worth it
/// let parsed = try CompressedPayload(stored, payloadLength: payload.count)
/// try parsed.decompress(blocks: 0..<parsed.blockCount, into: buffer) { id in dictionary(id) }
/// ```
struct CompressedPayload {
    /// The payload bytes a block holds, as a power of two: what this
    /// version writes (readers take the record's).
    static let blockShift: UInt8 = 13

    let dictionaryID: UInt32
    let blockShift: UInt8
    let payloadLength: Int
    /// Each block's frame within the stored bytes.
    let frames: [Range<Int>]
    let stored: UnsafeRawBufferPointer

    var blockSize: Int { 1 << Int(blockShift) }
    var blockCount: Int { frames.count }

    /// The stored form of `payload` compressed with `dictionary`, or nil
    /// when it would not be smaller than the payload itself.
    static func encode(_ payload: UnsafeRawBufferPointer, dictionary: ZstdDictionary?) throws -> [UInt8]? {
        guard payload.count >= 16 else { return nil }
        let size = 1 << Int(blockShift)
        var frames: [[UInt8]] = []
        var start = 0
        while start < payload.count {
            let end = min(start + size, payload.count)
            frames.append(try Zstd.compress(UnsafeRawBufferPointer(rebasing: payload[start..<end]), dictionary: dictionary))
            start = end
        }
        var out: [UInt8] = []
        out.reserveCapacity(frames.reduce(8 + 3 * frames.count) { $0 + $1.count })
        Varint.append(UInt64(dictionary?.id ?? 0), to: &out)
        out.append(blockShift)
        for frame in frames.dropLast() { Varint.append(UInt64(frame.count), to: &out) }
        for frame in frames { out.append(contentsOf: frame) }
        guard out.count < payload.count else { return nil }
        return out
    }

    /// Parses the stored bytes of a payload of `payloadLength` bytes; throws
    /// when they are not in this shape.
    init(_ stored: UnsafeRawBufferPointer, payloadLength: Int) throws {
        var reader = ByteReader(stored)
        func varint() throws -> UInt64 {
            do { return try reader.varint() } catch { throw Self.malformed("\(error), in \(stored.count) stored bytes") }
        }
        let id = try varint()
        guard id <= UInt64(UInt32.max) else { throw Self.malformed("dictionary \(id) is past 2^32 - 1") }
        guard !reader.isAtEnd else { throw Self.malformed("the block size is missing") }
        let shift = stored[reader.offset]
        reader.offset += 1
        guard (6...24).contains(shift) else { throw Self.malformed("blocks of 2^\(shift) bytes; allowed: 2^6 to 2^24") }
        guard payloadLength > 0 else { throw Self.malformed("a compressed payload of 0 bytes") }
        let count = (payloadLength + (1 << Int(shift)) - 1) >> Int(shift)
        var lengths: [Int] = []
        lengths.reserveCapacity(count)
        for _ in 0..<(count - 1) { lengths.append(Int(clamping: try varint())) }
        var frames: [Range<Int>] = []
        frames.reserveCapacity(count)
        var start = reader.offset
        for length in lengths {
            guard length > 0, length <= stored.count - start else {
                throw Self.malformed("block \(frames.count) of \(length) bytes runs past the \(stored.count) stored bytes")
            }
            frames.append(start..<(start + length))
            start += length
        }
        guard start < stored.count else { throw Self.malformed("the last block is empty") }
        frames.append(start..<stored.count)
        dictionaryID = UInt32(id)
        blockShift = shift
        self.payloadLength = payloadLength
        self.frames = frames
        self.stored = stored
    }

    /// The block size (as a power of two) the header of `stored` names,
    /// without parsing the rest; nil when the header is not in this shape
    /// (then ``init(_:payloadLength:)`` says why).
    static func blockShift(of stored: UnsafeRawBufferPointer) -> UInt8? {
        var reader = ByteReader(stored)
        guard (try? reader.varint(as: UInt32.self)) != nil,   // the dictionary
              let shift = try? reader.byte(), (6...24).contains(shift) else { return nil }
        return shift
    }

    /// The payload bytes block `index` holds.
    func span(ofBlock index: Int) -> Range<Int> {
        let start = index << Int(blockShift)
        return start..<min(start + blockSize, payloadLength)
    }

    /// The blocks that hold `range` of the payload.
    func blocks(covering range: Range<Int>) -> Range<Int> {
        guard !range.isEmpty else { return 0..<0 }
        return (range.lowerBound >> Int(blockShift))..<(((range.upperBound - 1) >> Int(blockShift)) + 1)
    }

    /// Decompresses `blocks` into `out`, which holds exactly their bytes
    /// (`span(ofBlock:)` of each, in order).
    func decompress(blocks: Range<Int>, into out: UnsafeMutableRawBufferPointer, dictionary: ZstdDictionary?) throws {
        guard let first = blocks.first else { return }
        let base = span(ofBlock: first).lowerBound
        for index in blocks {
            let span = span(ofBlock: index)
            try Zstd.decompress(UnsafeRawBufferPointer(rebasing: stored[frames[index]]),
                                into: UnsafeMutableRawBufferPointer(rebasing: out[(span.lowerBound - base)..<(span.upperBound - base)]),
                                dictionary: dictionary)
        }
    }

    private static func malformed(_ detail: String) -> ZstdError {
        ZstdError(call: "read compressed payload", detail)
    }
}
