import Foundation
import LMDB
import Testing

@Suite("The byte kit: varints, big-endian integers, front coding, space keys")
struct BytesTests {
    /// `value`'s varint, read back by a ``ByteReader`` as a `T`.
    static func readBack<T: FixedWidthInteger & UnsignedInteger>(_ bytes: [UInt8], as type: T.Type) throws -> (T, Int) {
        try bytes.withUnsafeBytes { raw throws in
            var r = ByteReader(raw)
            let v = try r.varint(as: type)
            return (v, r.offset)
        }
    }

    @Test("a varint round-trips at every boundary, in as few bytes as its value needs")
    func varintBoundaries() throws {
        let cases: [(UInt64, [UInt8])] = [
            (0, [0x00]), (1, [0x01]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02]),
            (16_383, [0xFF, 0x7F]), (16_384, [0x80, 0x80, 0x01]),
            (UInt64(UInt32.max), [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
            (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        ]
        for (value, bytes) in cases {
            var out: [UInt8] = []
            Varint.append(value, to: &out)
            #expect(out == bytes, "\(value)")
            #expect(Varint.size(of: value) == bytes.count, "\(value)")
            var w = ByteWriter()
            w.varint(value)
            #expect(w.bytes == bytes)
            var written = [UInt8](repeating: 0xEE, count: 12)
            var at = 1
            written.withUnsafeMutableBytes { Varint.write(value, into: $0, at: &at) }
            #expect(at == 1 + bytes.count && Array(written[1..<at]) == bytes)
            let (read, end) = try Self.readBack(bytes, as: UInt64.self)
            #expect(read == value && end == bytes.count)
            if value <= UInt64(UInt32.max) {
                let (read32, end32) = try Self.readBack(bytes, as: UInt32.self)
                #expect(UInt64(read32) == value && end32 == bytes.count)
            }
        }
        // Every power of two and its neighbours, through the pointer reader too.
        for shift in 0..<64 {
            for value in [UInt64(1) << shift, (UInt64(1) << shift) - 1, (UInt64(1) << shift) + 1] {
                var out: [UInt8] = []
                Varint.append(value, to: &out)
                #expect(out.count == Varint.size(of: value))
                let read = try out.withUnsafeBufferPointer { b in
                    var p = b.baseAddress!
                    let v = try Varint.read(UInt64.self, from: &p, end: b.baseAddress! + b.count)
                    #expect(p == b.baseAddress! + b.count)
                    return v
                }
                #expect(read == value)
            }
        }
    }

    @Test("a varint cut short is refused, naming where it started")
    func varintCutShort() {
        for bytes: [UInt8] in [[], [0x80], [0xFF, 0xFF], [0x80, 0x80, 0x80, 0x80]] {
            #expect(throws: ByteError(.varint(.cutShort), at: 0)) { try Self.readBack(bytes, as: UInt64.self) }
        }
        // After a first value: the offset is the second's.
        #expect(throws: ByteError(.varint(.cutShort), at: 1)) {
            try [UInt8]([0x05, 0x80]).withUnsafeBytes { raw throws in
                var r = ByteReader(raw)
                _ = try r.varint()
                _ = try r.varint()
            }
        }
        #expect("\(ByteError(.varint(.cutShort), at: 3))".contains("cut short") && "\(ByteError(.varint(.cutShort), at: 3))".contains("byte 3"))
    }

    @Test("a varint longer than its integer, or wider, is refused")
    func varintTooLong() throws {
        // 11 bytes for a UInt64; 10 whose last holds more than the 64th bit.
        let eleven: [UInt8] = Array(repeating: 0x80, count: 10) + [0x00]
        let wide: [UInt8] = Array(repeating: 0xFF, count: 9) + [0x02]
        for bytes in [eleven, wide] {
            #expect(throws: ByteError(.varint(.tooLong(maximumBytes: 10)), at: 0)) { try Self.readBack(bytes, as: UInt64.self) }
        }
        // 2³² in a UInt32; 6 bytes for one.
        #expect(throws: ByteError(.varint(.tooLong(maximumBytes: 5)), at: 0)) {
            try Self.readBack([0x80, 0x80, 0x80, 0x80, 0x10], as: UInt32.self)
        }
        #expect(throws: ByteError(.varint(.tooLong(maximumBytes: 5)), at: 0)) {
            try Self.readBack([0x80, 0x80, 0x80, 0x80, 0x80, 0x00], as: UInt32.self)
        }
        #expect(throws: ByteError(.varint(.tooLong(maximumBytes: 5)), at: 0)) {
            try [UInt8]([0x80, 0x80, 0x80, 0x80, 0x10]).withUnsafeBytes { raw throws in
                var r = ByteReader(raw)
                _ = try r.length()
            }
        }
        #expect("\(VarintError.tooLong(maximumBytes: 5))".contains("5 bytes"))
        // Padding within the width reads as its value (as protobuf's readers take it).
        let (padded, end) = try Self.readBack([0x80, 0x00], as: UInt32.self)
        #expect(padded == 0 && end == 2)
    }

    @Test("big-endian integers, fixed reads and length-prefixed bytes round-trip; a read past the end is refused")
    func fixedWidth() throws {
        var w = ByteWriter()
        w.bigEndian(UInt16(0x0102))
        w.bigEndian(UInt32(0x0304_0506))
        w.bigEndian(UInt64.max - 1)
        w.double(-2.5)
        w.string("héllo")
        w.lengthPrefixed([UInt8]())
        w.byte(9)
        #expect(Array(w.bytes.prefix(6)) == [1, 2, 3, 4, 5, 6])
        #expect(BigEndian.bytes(of: UInt32(7)) == [0, 0, 0, 7])
        #expect(BigEndian.value(UInt32.self, of: [0, 0, 1, 0]) == 256 && BigEndian.value(UInt32.self, of: [1]) == nil)
        try w.bytes.withUnsafeBytes { raw throws in
            var r = ByteReader(raw)
            #expect(try r.bigEndian(UInt16.self) == 0x0102)
            #expect(try r.bigEndian(UInt32.self) == 0x0304_0506)
            #expect(try r.bigEndian(UInt64.self) == UInt64.max - 1)
            #expect(Double(bitPattern: try r.bigEndian(UInt64.self)) == -2.5)
            #expect(Array(try r.lengthPrefixed()) == Array("héllo".utf8))
            #expect(try r.lengthPrefixed().isEmpty)
            #expect(try r.byte() == 9 && r.isAtEnd && r.remaining == 0)
            #expect(throws: ByteError(.cutShort(needed: 1, left: 0), at: raw.count)) { _ = try r.byte() }
            #expect(throws: ByteError(.cutShort(needed: 4, left: 0), at: raw.count)) { _ = try r.bigEndian(UInt32.self) }
        }
        // A length past the end.
        #expect(throws: ByteError(.cutShort(needed: 5, left: 2), at: 1)) {
            try [UInt8]([5, 1, 2]).withUnsafeBytes { raw throws in
                var r = ByteReader(raw)
                _ = try r.lengthPrefixed()
            }
        }
        var stored = [UInt8](repeating: 0, count: 6)
        stored.withUnsafeMutableBytes { BigEndian.store(UInt32(0xA0B0_C0D0), into: $0, at: 2) }
        #expect(stored == [0, 0, 0xA0, 0xB0, 0xC0, 0xD0])
        #expect(stored.withUnsafeBytes { BigEndian.load(UInt32.self, from: $0, at: 2) } == 0xA0B0_C0D0)
    }

    @Test("front-coded entries round-trip, appended or written into a sized buffer")
    func frontCoding() throws {
        let keys = ["", "a", "apple", "applesauce", "apply", "b", String(repeating: "z", count: 300)].map { Array($0.utf8) }
        var appended: [UInt8] = []
        var sized = [UInt8](repeating: 0, count: 4_096)
        var at = 0
        var previous: [UInt8] = []
        var expectedSize = 0
        for (n, key) in keys.enumerated() {
            let shared = FrontCoding.sharedCount(previous, key)
            let value = [UInt8](repeating: UInt8(n), count: n * 40)
            FrontCoding.appendEntry(shared: shared, suffix: key[shared...], value: value, to: &appended)
            key.withUnsafeBytes { k in
                value.withUnsafeBytes { v in
                    sized.withUnsafeMutableBytes { out in
                        FrontCoding.writeEntry(shared: shared, suffix: UnsafeRawBufferPointer(rebasing: k[shared...]), value: v, into: out, at: &at)
                    }
                }
            }
            expectedSize += FrontCoding.entrySize(shared: shared, suffix: key.count - shared, value: value.count)
            previous = key
        }
        #expect(appended.count == expectedSize && Array(sized[0..<at]) == appended)
        try appended.withUnsafeBytes { raw throws in
            var r = ByteReader(raw)
            var key: [UInt8] = []
            for (n, expected) in keys.enumerated() {
                let (shared, suffix) = try r.frontCodedKey()
                key = Array(key.prefix(shared)) + suffix
                #expect(key == expected)
                #expect(Array(try r.lengthPrefixed()) == [UInt8](repeating: UInt8(n), count: n * 40))
            }
            #expect(r.isAtEnd)
        }
        #expect(FrontCoding.sharedCount([1, 2, 3], [1, 2]) == 2 && FrontCoding.sharedCount([UInt8](), [1]) == 0)
    }

    @Test("a space key is the space big-endian then its parts; a space's keys are one range")
    func spaceKeys() throws {
        #expect(SpaceKey(space: 3, "a1").encoded == [0, 0, 0, 3, 0x61, 0x31])
        #expect(SpaceKey(space: 2, UInt32(7)).encoded == [0, 0, 0, 2, 0, 0, 0, 7])
        var key = SpaceKey(space: 0x0102_0304).appending(bigEndian: UInt32(5)).appending(bigEndian: UInt16(6)).appending([9, 9])
        #expect(key.encoded == [1, 2, 3, 4, 0, 0, 0, 5, 0, 6, 9, 9] && key.space == 0x0102_0304 && Array(key.rest) == [0, 0, 0, 5, 0, 6, 9, 9])
        key.replace(bigEndian: UInt32(8), at: 4)
        key.removeAll(after: 8)
        #expect(key.encoded == [1, 2, 3, 4, 0, 0, 0, 8] && key.count == 8)
        #expect(SpaceKey.prefix(of: 1) == [0, 0, 0, 1])
        #expect([UInt8]([0, 0, 1, 0, 7]).withUnsafeBytes { SpaceKey.space(of: $0) } == 256)
        #expect([UInt8]([0, 1]).withUnsafeBytes { SpaceKey.space(of: $0) } == nil)
        #expect(throws: LMDBDecodingError.self) { try [UInt8]([0, 1]).withUnsafeBytes { try SpaceKey.decode(lmdbBytes: $0) } }
        #expect(try [UInt8]([0, 0, 0, 4, 1]).withUnsafeBytes { try SpaceKey.decode(lmdbBytes: $0) } == SpaceKey(space: 4, [1]))

        // Stored: a walk of one space and a delete of its range leave the neighbours as they were.
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("spaces", as: SpaceKey.self, [UInt8].self) }
        try env.write { txn in
            for space: UInt32 in [1, 2, 3, 256] {
                for name in ["b", "a", "c"] { try db.put([UInt8(space & 0xFF)], forKey: SpaceKey(space: space, name), in: txn) }
            }
        }
        var seen: [String] = []
        try env.read { txn in
            try db.forEach(inSpace: 2, in: txn) { key, _ in
                seen.append(String(decoding: key, as: UTF8.self))
                return true
            }
            #expect(try db.count(inSpace: 256, in: txn) == 3 && db.count(inSpace: 9, in: txn) == 0)
        }
        #expect(seen == ["a", "b", "c"])
        try env.write { txn in try db.removeAll(withPrefix: SpaceKey.prefix(of: 2), in: txn) }
        try env.read { txn in
            #expect(try db.count(inSpace: 2, in: txn) == 0)
            for space: UInt32 in [1, 3, 256] { #expect(try db.count(inSpace: space, in: txn) == 3) }
            var all = 0
            try db.forEach(withPrefix: [0], in: txn) { _, _ in
                all += 1
                return true
            }
            #expect(all == 9)
        }
    }
}
