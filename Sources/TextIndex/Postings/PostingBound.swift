import LMDB

/// An upper bound of the score any document of one block's postings value
/// can get from its term, whatever the index's statistics (`idf`, average
/// field lengths): a few *impacts*, per-field (term frequency, length norm)
/// vectors such that every document of the value is dominated by one of
/// them (it has the term in a subset of the vector's fields, each with no
/// more occurrences and no shorter a field). BM25F grows with a field's
/// frequency and falls with its length, for every average length, so the
/// best of the impacts' scores bounds the block's best, and a query skips
/// (does not decode) a block whose bound is below the `limit`-th best score
/// it already has (block-max pruning, as Lucene's impacts and Tantivy's
/// block WAND; those store one field's (frequency, norm) pairs).
///
/// ```
/// varint  length in bytes of the impacts that follow
/// 1 to maxImpacts impacts, each: u8 field mask (not 0), then per set
///         bit, low to high: varint term frequency, u8 length norm
/// ```
///
/// The impacts are the value's Pareto front (documents no other document
/// dominates, first seen first, equal ones once); past `maxImpacts`, the
/// front's weakest (by ``rank(_:)``, a fixed integer estimate) are merged
/// into one impact, their field-wise maximum frequency and minimum norm.
/// A function of the value's bytes alone, so a rebuild writes the same.
///
/// ```swift
/// var bound: [UInt8] = []
/// try PostingBound.encode(postingsValue, into: &bound)   // appended
/// ```
enum PostingBound {
    /// Values with fewer documents are decoded, not bounded: their bound
    /// would cost about as much to read as they do.
    static let minimumCount = 16
    static let maxImpacts = 8

    /// One impact: per field slot, frequency and norm; a slot outside
    /// `mask` holds frequency 0 and norm 255, so that dominance and merging
    /// are lane-wise comparisons (no allocation per document).
    struct Impact: Equatable {
        var mask: UInt8 = 0
        var frequency = SIMD8<UInt32>(repeating: 0)
        var norm = SIMD8<UInt8>(repeating: 255)

        /// Whether every document this one covers is covered by `self`.
        @inline(__always)
        func dominates(_ other: Impact) -> Bool {
            mask & other.mask == other.mask
                && all(frequency .>= other.frequency) && all(norm .<= other.norm)
        }

        /// Field-wise maximum frequency and minimum norm of `self` and `other`.
        mutating func merge(_ other: Impact) {
            frequency = pointwiseMax(frequency, other.frequency)
            norm = pointwiseMin(norm, other.norm)
            mask |= other.mask
        }
    }

    /// A fixed integer estimate of an impact's score (field weight × frequency,
    /// shrunk by length), used only to choose which impacts to merge.
    static func rank(_ impact: Impact) -> Int {
        var r = 0
        var m = impact.mask
        while m != 0 {
            let s = m.trailingZeroBitCount
            m &= m - 1
            let weight = Int(IndexField(slot: s).weight * 4)
            r += weight * Int(impact.frequency[s]) * 1024 / (4 + FieldNorm.length(impact.norm[s]))
        }
        return r
    }

    /// The impacts of a postings value (``PostingList``) with at least
    /// ``minimumCount`` documents; nil for a smaller one.
    static func impacts(_ value: UnsafeRawBufferPointer) throws -> [Impact]? {
        let head = try PostingList.header(value)
        guard head.count >= minimumCount else { return nil }
        var r = ByteReader(value, offset: head.body)
        var front: [Impact] = []
        for _ in 0..<head.count {
            var doc = Impact()
            do throws(ByteError) {
                _ = try r.int()
                doc.mask = try r.byte()
                var m = doc.mask
                while m != 0 {
                    let s = m.trailingZeroBitCount
                    m &= m - 1
                    doc.frequency[s] = UInt32(clamping: try r.int())
                    doc.norm[s] = try r.byte()
                }
            } catch {
                throw PostingList.corrupt(error)
            }
            if front.contains(where: { $0.dominates(doc) }) { continue }
            front.removeAll { doc.dominates($0) }
            front.append(doc)
        }
        guard front.count > maxImpacts else { return front }
        // Keep the strongest `maxImpacts - 1` in front order; merge the rest into one.
        let ranked = front.indices.sorted { a, b in
            let ra = rank(front[a]), rb = rank(front[b])
            return ra != rb ? ra > rb : a < b
        }
        let kept = Set(ranked.prefix(maxImpacts - 1))
        var rest = Impact()
        var impacts: [Impact] = []
        for (i, impact) in front.enumerated() {
            if kept.contains(i) { impacts.append(impact) } else { rest.merge(impact) }
        }
        impacts.append(rest)
        return impacts
    }

    /// Appends the bound of `value` to `out`; false (nothing appended) when
    /// the value is too small to be bounded.
    static func encode(_ value: UnsafeRawBufferPointer, into out: inout [UInt8]) throws -> Bool {
        guard let impacts = try impacts(value) else { return false }
        var bytes: [UInt8] = []
        for impact in impacts {
            bytes.append(impact.mask)
            var m = impact.mask
            while m != 0 {
                let s = m.trailingZeroBitCount
                m &= m - 1
                Varint.append(Int(impact.frequency[s]), to: &bytes)
                bytes.append(impact.norm[s])
            }
        }
        Varint.append(bytes.count, to: &out)
        out.append(contentsOf: bytes)
        return true
    }

    /// The length of the bound at the start of `bytes` (its length varint included).
    @inline(__always)
    static func length(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        var r = ByteReader(bytes)
        let n: Int
        do throws(ByteError) { n = try r.int() } catch { throw TextIndexError.corrupt("postings bound: \(error)") }
        guard n >= 2 else { throw TextIndexError.corrupt("postings bound length") }
        return r.offset + n
    }

    /// The largest `x = Σ_fields factor(slot, norm) · tf` of the impacts in
    /// `bound` (``factor``: ``Searcher/ScoreScratch/factor``), summed by
    /// ``Searcher/fieldSum(mask:_:_:factor:corrupt:)`` as a document's is, so
    /// that it is never below a covered document's `x` in floating point
    /// either.
    @inline(__always)
    static func maximum(_ bound: UnsafeRawBufferPointer, factor: UnsafeMutablePointer<Double>) throws -> Double {
        guard let base = bound.baseAddress?.assumingMemoryBound(to: UInt8.self), bound.count > 0 else {
            throw TextIndexError.corrupt("postings bound")
        }
        var p = base
        let end = base + bound.count
        _ = try Searcher.number(&p, end)
        var best = 0.0
        while p < end {
            let mask = p.pointee
            p += 1
            let x = try Searcher.fieldSum(mask: mask, &p, end, factor: factor, corrupt: "postings bound")
            if x > best { best = x }
        }
        return best
    }
}
