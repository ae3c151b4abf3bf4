/// A field's length in words, quantized to one byte for postings (as
/// Lucene's norms): exact up to 63 words, then steps of about 3 %, up to
/// about 17 million words.
///
/// ```swift
/// FieldNorm.encode(10)          // 10
/// FieldNorm.length(FieldNorm.encode(1000))   // 992, the largest step ≤ 1000
/// ```
///
/// Integer arithmetic only, so that every platform encodes alike.
enum FieldNorm {
    /// `lengths[b]`: the length that byte `b` stands for, strictly increasing.
    static let lengths: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for i in 0..<64 { table[i] = i }
        for i in 64..<256 { table[i] = table[i - 1] + max(1, table[i - 1] >> 5) }
        return table
    }()

    /// The byte of the largest step not above `length`.
    static func encode(_ length: Int) -> UInt8 {
        if length < 64 { return UInt8(max(0, length)) }
        var lo = 63, hi = 255
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lengths[mid] <= length { lo = mid } else { hi = mid - 1 }
        }
        return UInt8(lo)
    }

    static func length(_ byte: UInt8) -> Int { lengths[Int(byte)] }
}
