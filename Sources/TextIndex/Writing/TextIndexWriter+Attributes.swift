import Foundation
import LMDB

/// The attribute index's part of a flush (database `values`, ``AttributeBlock``).
extension TextIndexWriter {
    /// Applies a flush's attribute changes (each `space ‖ attribute key ‖`
    /// ``AttributeBlock/change(of:adds:)``): per attribute key and block,
    /// the stored offsets are read once, the documents that lose the value
    /// leave, those that gain it join, and the value is written once (or
    /// deleted when no document is left), in key order.
    func writeAttributeChanges(_ changes: ByteStrings) throws {
        let order = changes.sortedOrder()
        var gains: [UInt16] = [], losses: [UInt16] = [], merged: [UInt16] = []
        var i = 0
        while i < order.count {
            let key = changes.withBytes(order[i]) { Array($0.dropLast(AttributeBlock.changeBytesAfterBlock)) }
            gains.removeAll(keepingCapacity: true)
            losses.removeAll(keepingCapacity: true)
            while i < order.count, let (offset, adds) = changes.withBytes(order[i], { bytes -> (UInt16, Bool)? in
                let n = bytes.count - (AttributeBlock.changeBytesAfterBlock)
                guard n == key.count, memcmp(bytes.baseAddress!, key, n) == 0 else { return nil }
                return (BigEndian.load(UInt16.self, from: bytes, at: n), bytes[n + 2] == 1)
            }) {
                if adds { gains.append(offset) } else { losses.append(offset) }
                i += 1
            }
            let stored = try index.values.withValue(forKey: key, in: txn) { try AttributeBlock.offsets(in: $0) } ?? []
            // Three ascending lists: stored ∪ gains, without losses.
            merged.removeAll(keepingCapacity: true)
            var s = 0, g = 0, l = 0
            while s < stored.count || g < gains.count {
                let next: UInt16
                if g == gains.count || (s < stored.count && stored[s] <= gains[g]) {
                    next = stored[s]
                    if g < gains.count && gains[g] == next { g += 1 }
                    s += 1
                } else {
                    next = gains[g]
                    g += 1
                }
                while l < losses.count && losses[l] < next { l += 1 }
                if l < losses.count && losses[l] == next { continue }
                merged.append(next)
            }
            if !merged.isEmpty {
                try index.values.put(AttributeBlock.encode(merged), forKey: key, in: txn)
            } else if !stored.isEmpty {
                _ = try index.values.delete(key, in: txn)
            }
        }
    }
}
