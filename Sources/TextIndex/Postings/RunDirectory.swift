import LMDB

/// The runs of a space's open block (key `space ‖ "runs"` of database
/// `meta`; absent: no runs).
///
/// A block whose 4,096 document ids are not all allocated yet is *open*:
/// its postings are not kept one value a term, rewritten by every flush that
/// adds documents to it, but in immutable **runs** (database `runs`). Each
/// group of new documents added to the open block (a flush, or
/// ``TextIndexWriter/endGroup()``) makes one run, holding their postings,
/// written once; runs are merged by a fixed policy (``fanout`` runs of one
/// level into one of the next, while that makes less than half a block) and,
/// when the block's last id is allocated, into the block's values in
/// `postings` (the block is *sealed*). What runs exist is a function of the
/// groups alone (their number and the documents in each), so the same calls
/// write the same bytes.
///
/// Runs partition the open block's offsets: run `i` holds documents with
/// offsets from its `start` up to the next run's `start` (the last: up to the
/// block's end), whatever changed them since (a replaced or removed document
/// is changed in the run that holds its offset).
///
/// ```
/// u8   format (1)
/// u32  block
/// varint run count; per run, by start:  u16 start (big-endian), u8 level
/// ```
///
/// ```swift
/// var directory = RunDirectory(block: 3)
/// directory.runs.append(.init(start: 0, level: 0))
/// directory.run(containing: 17)   // 0
/// ```
struct RunDirectory: Equatable {
    struct Run: Equatable {
        /// Offset in the block of the run's first document.
        var start: UInt16
        /// 0 for a run a flush wrote; L + 1 for ``fanout`` runs of level L merged.
        var level: UInt8

        init(start: UInt16, level: UInt8) {
            self.start = start
            self.level = level
        }
    }

    var block: UInt32
    var runs: [Run] = []

    static let format: UInt8 = 1
    /// Runs of one level merged into one of the next: at most
    /// `fanout − 1` runs a level stay apart, so a query reads a few runs
    /// (with batches of 500, at most 8 before the block is sealed; with
    /// batches of 1, at most 7 per level of 1, 8, 64, 512 documents).
    static let fanout = 8

    init(block: UInt32) {
        self.block = block
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = ByteReader(bytes)
        (block, runs) = try TextIndexError.reading("run directory") {
            guard try r.byte() == RunDirectory.format else { throw TextIndexError.corrupt("run directory format") }
            let block = try r.bigEndian(UInt32.self)
            let n = try r.count()
            var runs: [Run] = []
            runs.reserveCapacity(n)
            var previous = -1
            for _ in 0..<n {
                let start = Int(try r.bigEndian(UInt16.self))
                guard start > previous, start < TextIndex.blockSize else { throw TextIndexError.corrupt("run directory order") }
                previous = start
                runs.append(Run(start: UInt16(start), level: try r.byte()))
            }
            guard r.isAtEnd else { throw TextIndexError.corrupt("run directory length") }
            return (block, runs)
        }
    }

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 8 + 3 * runs.count)
        w.byte(RunDirectory.format)
        w.bigEndian(block)
        w.varint(runs.count)
        for run in runs {
            w.bigEndian(run.start)
            w.byte(run.level)
        }
        return w.bytes
    }

    /// The index of the run that holds `offset`, or nil when it is before the first.
    func run(containing offset: Int) -> Int? {
        var found: Int?
        for (i, run) in runs.enumerated() where Int(run.start) <= offset { found = i }
        return found
    }

    /// The runs to merge next among `runs` (start, level, by start; the
    /// block filled up to `fill`), as a range: the last ``fanout`` when they
    /// share a level and hold fewer than half a block's documents (a merge
    /// of more would soon be undone by the block's seal); nil when none is due.
    static func dueMerge(_ runs: [(start: UInt16, level: UInt8)], fill: Int) -> Range<Int>? {
        let f = fanout
        guard runs.count >= f else { return nil }
        let first = runs[runs.count - f]
        guard first.level < UInt8.max, runs[(runs.count - f)...].allSatisfy({ $0.level == first.level }),
              fill - Int(first.start) < TextIndex.blockSize / 2 else { return nil }
        return (runs.count - f)..<runs.count
    }
}
