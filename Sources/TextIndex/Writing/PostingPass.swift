import LMDB

/// One flush's posting changes written (``TextIndexWriter/writePostings(_:arena:)``):
/// where each (block, term)'s changes go, decided once from the blocks
/// before and after the flush, then the changes written or gathered in
/// key order, then what was gathered written.
///
/// - A sealed block's (every id allocated before this flush) values are
///   read, merged and written at once (``writeSealed(_:termId:_:)``).
/// - Changes to the open block's documents of earlier flushes are gathered
///   by the run that holds them (``gatherStoredEdits(_:termId:_:)``), and
///   each run edited once.
/// - New documents are gathered (``gatherNew(_:termId:_:)``): a block they
///   fill is written sealed (with its runs, when it had some); in the block
///   left open, each group makes a run of the plan (``RunPlan``), written
///   with the runs it merges (``writePlannedRuns()``).
struct PostingPass {
    let writer: TextIndexWriter
    let changes: [PostingChange]
    let arena: [UInt8]

    /// The first id of this flush, and the next id after it.
    let base: UInt32, next: UInt32
    /// The block open before the flush; blocks below `fullBlocks` are full after it.
    let openBlock: UInt32, fullBlocks: UInt32
    /// The first offset of the open block's new documents.
    let newStart: UInt16
    /// The open block fills up: its runs and new documents are sealed together.
    let sealsOpen: Bool
    /// The block open after the flush, when new documents reach it.
    let finalBlock: UInt32?
    /// Complete tiers before this flush.
    let tiers: UInt32
    var directory: RunDirectory
    /// The runs of `finalBlock` after the flush.
    let plan: RunPlan

    /// New documents of each run of the plan that has some, by term:
    /// written (merged with its stored runs, if any) at the end.
    var newEntries: [RunContents]
    /// Changes to documents of each stored run, by term: written before
    /// the open block is sealed or its runs merged.
    var storedEdits: [Int: [TextIndexWriter.RunEdit]] = [:]
    /// New documents of an open block that fills up: sealed with its runs.
    var sealingNew = RunContents()
    /// A block sealed by this flush without runs: its values, written into its tier at the next block.
    var direct: (block: UInt32, contents: RunContents)?
    /// Whether the open block was sealed (``sealOpenBlock()``).
    var sealed = false

    /// `space ‖ tier` or `space ‖ block` of each sealed block met: the key before the term.
    var sealedPrefixes: [UInt32: [UInt8]] = [:]
    let storedPrefixes: [[UInt8]]
    let planPrefixes: [[UInt8]]
    var key: [UInt8] = []
    var value: [UInt8] = []
    var tierValue: [UInt8] = []

    /// The blocks of the flush and the plan of the block left open.
    init(_ writer: TextIndexWriter, _ changes: [PostingChange], arena: [UInt8]) throws {
        let shift = TextIndex.blockShift
        let offsetMask = UInt32(TextIndex.blockSize - 1)
        let index = writer.index
        let base = writer.flushedNextId, next = writer.stats!.nextDocumentId
        let openBlock = base >> shift, fullBlocks = next >> shift
        var directory = try index.runDirectory(in: writer.txn) ?? RunDirectory(block: openBlock)
        if directory.runs.isEmpty { directory.block = openBlock }
        guard directory.block == openBlock else {
            throw TextIndexError.corrupt("run directory of block \(directory.block), open block \(openBlock)")
        }
        let finalBlock: UInt32? = next > base && next & offsetMask != 0 ? fullBlocks : nil
        var plan = RunPlan(stored: [], groupStarts: [], fill: 0)
        if let finalBlock {
            let blockStart = finalBlock << shift
            var starts = [UInt16(max(base, blockStart) - blockStart)]
            for end in writer.groupEnds where end > max(base, blockStart) && end < next { starts.append(UInt16(end - blockStart)) }
            plan = RunPlan(stored: finalBlock == openBlock ? directory.runs : [], groupStarts: starts,
                           fill: Int(next - blockStart))
        }
        self.writer = writer
        self.changes = changes
        self.arena = arena
        self.base = base
        self.next = next
        self.openBlock = openBlock
        self.fullBlocks = fullBlocks
        self.directory = directory
        newStart = UInt16(base & offsetMask)
        sealsOpen = fullBlocks > openBlock && !directory.runs.isEmpty && next > base
        self.finalBlock = finalBlock
        self.plan = plan
        tiers = openBlock >> PostingTier.shift
        newEntries = [RunContents](repeating: RunContents(), count: plan.runs.count)
        storedPrefixes = directory.runs.map { index.runPrefix(block: openBlock, start: $0.start) }
        planPrefixes = finalBlock.map { b in plan.runs.map { index.runPrefix(block: b, start: $0.start) } } ?? []
    }

    /// The end of the (block, term) whose changes start at `i`.
    func endOfGroup(from i: Int) -> Int {
        var j = i
        while j < changes.count && changes[j].group == changes[i].group { j += 1 }
        return j
    }

    /// Writes or gathers the changes `range` of one block and term.
    mutating func write(_ range: Range<Int>) throws {
        let block = changes[range.lowerBound].block
        let termId = changes[range.lowerBound].termId
        if block > openBlock { try sealOpenBlock() }
        if let d = direct, d.block != block { try writeDirect() }
        if block < openBlock {
            try writeSealed(block, termId: termId, range)
            return
        }
        let new = try gatherStoredEdits(block, termId: termId, range)
        guard new < range.upperBound else { return }
        try gatherNew(block, termId: termId, new..<range.upperBound)
    }

    /// Writes what was gathered, then the block left open's run directory.
    mutating func finish() throws {
        try writeDirect()
        try writeStoredEdits()
        guard next > base else { return }
        try sealOpenBlock()
        try writePlannedRuns()
        try writeDirectory()
    }

    // MARK: Sealed blocks

    /// A sealed block's changes: its value (or its part of its tier's) read, merged, written.
    mutating func writeSealed(_ block: UInt32, termId: Int32, _ range: Range<Int>) throws {
        key.removeAll(keepingCapacity: true)
        key.append(contentsOf: sealedPrefix(block))
        key.append(contentsOf: writer.table.bytes(termId))
        if block >> PostingTier.shift < tiers {
            try readModifyWriteTier(Int(block & UInt32(PostingTier.blocks - 1)), changes[range])
        } else {
            try readModifyWrite(writer.index.blocks, changes[range])
        }
    }

    /// `space ‖ tier` for a block of a complete tier, else `space ‖ block`: the key before the term.
    mutating func sealedPrefix(_ block: UInt32) -> [UInt8] {
        if let p = sealedPrefixes[block] { return p }
        let p = writer.index.postingKey(block: block >> PostingTier.shift < tiers ? block >> PostingTier.shift : block,
                                        term: EmptyCollection())
        sealedPrefixes[block] = p
        return p
    }

    /// Block `sub` of the tier value at `key`: read, merged with `slice`, written.
    mutating func readModifyWriteTier(_ sub: Int, _ slice: ArraySlice<PostingChange>) throws {
        let index = writer.index, txn = writer.txn
        var parts = try index.postings.withValue(forKey: key, in: txn) { try PostingTier.parts($0) } ?? []
        let stored = !parts.isEmpty
        let k = parts.firstIndex { $0.0 >= sub }
        if let k, parts[k].0 == sub {
            _ = try parts[k].1.withUnsafeBytes { try PostingList.merge($0, slice, payloads: arena, into: &value) }
            if value.isEmpty { parts.remove(at: k) } else { parts[k].1 = ArraySlice(value) }
        } else {
            _ = try PostingList.merge(nil, slice, payloads: arena, into: &value)
            if !value.isEmpty { parts.insert((sub, ArraySlice(value)), at: k ?? parts.count) }
        }
        try PostingTier.encode(parts, into: &tierValue)
        if !tierValue.isEmpty {
            try index.postings.put(tierValue, forKey: key, in: txn)
        } else if stored {
            try index.postings.delete(key, in: txn)
        }
    }

    /// The value at `key` of `db`: read, merged with `slice`, written (deleted when empty).
    mutating func readModifyWrite(_ db: Database<[UInt8], [UInt8]>, _ slice: ArraySlice<PostingChange>) throws {
        let txn = writer.txn
        let existed = try db.withValue(forKey: key, in: txn) { existing in
            try PostingList.merge(existing, slice, payloads: arena, into: &value)
        }
        switch existed {
        case .some(true), .none:
            if existed == nil { _ = try PostingList.merge(nil, slice, payloads: arena, into: &value) }
            if !value.isEmpty { try db.put(value, forKey: key, in: txn) }
        case .some(false):
            try db.delete(key, in: txn)
        }
    }

    /// Writes the block sealed without runs, once its last term is gathered.
    mutating func writeDirect() throws {
        guard let d = direct else { return }
        direct = nil
        try writer.writeSealedBlock(d.block, d.contents)
    }

    // MARK: The open block

    /// Gathers the changes to documents of earlier flushes (offsets before
    /// `newStart`) of the open block, run by run; returns where the new
    /// documents' changes start in `range`.
    mutating func gatherStoredEdits(_ block: UInt32, termId: Int32, _ range: Range<Int>) throws -> Int {
        var k = range.lowerBound
        guard block == openBlock else { return k }
        let j = range.upperBound
        while k < j && changes[k].offset < newStart {
            guard let r = directory.run(containing: Int(changes[k].offset)) else {
                throw TextIndexError.corrupt("no run holds offset \(changes[k].offset) of block \(block)")
            }
            let end = r + 1 < directory.runs.count ? directory.runs[r + 1].start : UInt16.max
            var m = k
            while m < j && changes[m].offset < newStart && changes[m].offset < end { m += 1 }
            storedEdits[r, default: []].append((termId, k..<m))
            k = m
        }
        return k
    }

    /// Gathers new documents' postings: into the open block's sealing, the
    /// block sealed without runs, or the runs of the plan.
    mutating func gatherNew(_ block: UInt32, termId: Int32, _ range: Range<Int>) throws {
        guard changes[range].allSatisfy(\.isSet) else { throw TextIndexError.corrupt("removal of a new document") }
        let term = writer.table.bytes(termId)
        if block < fullBlocks {
            if block == openBlock && sealsOpen {
                sealingNew.append(term: term, postings: changes[range], payloads: arena)
            } else {
                if direct == nil { direct = (block, RunContents()) }
                direct!.contents.append(term: term, postings: changes[range], payloads: arena)
            }
            return
        }
        // The block left open: split by the plan's runs.
        var k = range.lowerBound
        while k < range.upperBound {
            let r = plan.run(containing: changes[k].offset)
            let end = r + 1 < plan.runs.count ? plan.runs[r + 1].start : UInt16.max
            var m = k
            while m < range.upperBound && changes[m].offset < end { m += 1 }
            guard plan.runs[r].content != .stored else { throw TextIndexError.corrupt("new documents in a stored run") }
            newEntries[r].append(term: term, postings: changes[k..<m], payloads: arena)
            k = m
        }
    }

    /// Edits each stored run that changes gathered for, once.
    mutating func writeStoredEdits() throws {
        for r in storedEdits.keys.sorted() { try writer.editRun(storedPrefixes[r], storedEdits[r]!, changes, arena: arena) }
        storedEdits.removeAll()
    }

    /// Seals the open block once its changes are written, before any later
    /// block's run: then (with one space) its runs are all the database
    /// holds, and go at once.
    mutating func sealOpenBlock() throws {
        guard sealsOpen && !sealed else { return }
        try writeStoredEdits()
        try writer.seal(block: openBlock, starts: directory.runs.map(\.start), new: sealingNew)
        sealed = true
    }

    /// The plan's runs with new documents, in start order: a new run
    /// written once; a merged run's stored runs read, deleted, and written
    /// again with its new documents.
    func writePlannedRuns() throws {
        guard let finalBlock else { return }
        let index = writer.index
        for (r, run) in plan.runs.enumerated() {
            switch run.content {
            case .stored:
                continue
            case .new:
                try writer.writeRun(planPrefixes[r], newEntries[r])
            case .merged(let storedStarts):
                var contents = try storedStarts.map { try writer.readRun(index.runPrefix(block: finalBlock, start: $0)) }
                for start in storedStarts {
                    let prefix = index.runPrefix(block: finalBlock, start: start)
                    try writer.deleteRuns(from: prefix, within: prefix)
                }
                contents.append(newEntries[r])
                var merged = RunContents()
                var out: [UInt8] = []
                try TextIndexWriter.merge(contents) { term, values, _ in
                    try PostingList.concatenate(values, into: &out)
                    if !out.isEmpty { merged.append(term: term, value: out) }
                }
                try writer.writeRun(planPrefixes[r], merged)
            }
        }
    }

    /// The run directory of the block left open (none when it has no runs).
    mutating func writeDirectory() throws {
        if let finalBlock {
            directory = RunDirectory(block: finalBlock)
            directory.runs = plan.runs.map { RunDirectory.Run(start: $0.start, level: $0.level) }
        } else {
            directory = RunDirectory(block: fullBlocks)
        }
        let index = writer.index, txn = writer.txn
        if directory.runs.isEmpty {
            try index.meta.delete(index.metaKey(TextIndex.runsKey), in: txn)
        } else {
            try index.meta.put(directory.encoded(), forKey: index.metaKey(TextIndex.runsKey), in: txn)
        }
    }
}
