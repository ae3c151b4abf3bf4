/// Selection of the k best (score descending, id ascending) without
/// sorting everything: a heap of k.
///
/// ```swift
/// TopK.select([(1, 0.5), (2, 0.9), (3, 0.7)], 2)   // [(2, 0.9), (3, 0.7)]
/// ```
enum TopK {
    static func select(_ items: [(id: UInt32, score: Double)], _ k: Int) -> [(id: UInt32, score: Double)] {
        if items.count <= k {
            return items.sorted(by: better)
        }
        // A min-heap of the k best so far (root: the worst of them).
        var heap: [(id: UInt32, score: Double)] = []
        heap.reserveCapacity(k)
        for item in items {
            if heap.count < k {
                heap.append(item)
                var i = heap.count - 1
                while i > 0 {
                    let p = (i - 1) / 2
                    if better(heap[p], heap[i]) { heap.swapAt(p, i); i = p } else { break }
                }
            } else if better(item, heap[0]) {
                heap[0] = item
                var i = 0
                while true {
                    let l = 2 * i + 1, r = l + 1
                    var worst = i
                    if l < k && better(heap[worst], heap[l]) { worst = l }
                    if r < k && better(heap[worst], heap[r]) { worst = r }
                    if worst == i { break }
                    heap.swapAt(i, worst)
                    i = worst
                }
            }
        }
        return heap.sorted(by: better)
    }

    @inline(__always)
    static func better(_ a: (id: UInt32, score: Double), _ b: (id: UInt32, score: Double)) -> Bool {
        a.score != b.score ? a.score > b.score : a.id < b.id
    }

    /// The `capacity` best seen so far; `threshold` is the worst of them.
    struct Heap {
        let capacity: Int
        var items: [(id: UInt32, score: Double)] = []

        init(capacity: Int) {
            self.capacity = capacity
            items.reserveCapacity(capacity)
        }

        var isFull: Bool { capacity > 0 && items.count >= capacity }
        var threshold: Double { items.first?.score ?? -.infinity }

        /// Sifts with a hole (one store a level, no swaps) in the array's
        /// storage, so that a query's many inserts cost a few compares each.
        @inline(never)
        mutating func insert(_ item: (id: UInt32, score: Double)) {
            if items.count < capacity {
                items.append(item)
                items.withUnsafeMutableBufferPointer { h in
                    var i = h.count - 1
                    while i > 0 {
                        let p = (i - 1) / 2
                        guard better(h[p], item) else { break }
                        h[i] = h[p]
                        i = p
                    }
                    h[i] = item
                }
            } else if capacity > 0 && better(item, items[0]) {
                items.withUnsafeMutableBufferPointer { h in
                    let n = h.count
                    var i = 0
                    while true {
                        let l = 2 * i + 1
                        guard l < n else { break }
                        // The worse child: the one to rise if `item` is better.
                        let c = l + 1 < n && better(h[l], h[l + 1]) ? l + 1 : l
                        guard better(item, h[c]) else { break }
                        h[i] = h[c]
                        i = c
                    }
                    h[i] = item
                }
            }
        }
    }
}
