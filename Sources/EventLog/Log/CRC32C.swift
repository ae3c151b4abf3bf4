/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of a
/// log record: the same function as iSCSI, ext4 and LevelDB use, so any
/// language has it (`crc32c` in Python). Slice-by-8 tables, pure Swift.
enum CRC32C {
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        var index = 0
        let count = bytes.count
        Tables.shared.table.withUnsafeBufferPointer { t in
            while count - index >= 8 {
                let lo = bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian ^ crc
                let hi = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
                crc = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                index += 8
            }
            while index < count {
                crc = t[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    struct Tables: Sendable {
        static let shared = Tables()
        let table: [UInt32]

        init() {
            var t = [UInt32](repeating: 0, count: 8 * 256)
            for i in 0..<256 {
                var c = UInt32(i)
                for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
                t[i] = c
            }
            for i in 0..<256 {
                for k in 1..<8 {
                    let previous = t[(k - 1) * 256 + i]
                    t[k * 256 + i] = t[Int(previous & 0xFF)] ^ (previous >> 8)
                }
            }
            table = t
        }
    }
}
