import ActivityDomain
import EventLog
import Foundation

/// The engine of `apply`: decodes lines, groups them into transactions of
/// `transactionSize` lines, and commits each group's good lines.
///
/// A group is one `ActivityStore.write`: all or nothing. When a command
/// in it is rejected, the rejected line is reported and the group is
/// retried without it, so the store ends exactly as the good lines make it,
/// each seeing the effects of the good lines before it and none of the bad.
/// Lines from `beginIndexBatch` through `endIndexBatch` form one unit: they
/// are never split across groups, and one rejected line drops the unit.
///
/// With a pipeline (`apply --pipeline N`), a group is handed over without
/// waiting for the groups before it to be durable, so that lines are read
/// and items tokenized while earlier groups commit. The outcome is the same:
/// a pipeline applies nothing after a failed group (``CommandPipeline``),
/// so when a group is rejected, the applier waits for the groups in flight,
/// retries the rejected one without its bad line as above, applies the ones
/// after it again in order, and goes on with a new pipeline.
final class OperationApplier {
    struct Rejection {
        var line: Int
        var column: Int?
        var operation: String?
        var field: String?
        var message: String
    }

    struct Summary {
        var applied = 0
        var rejected = 0
        var droppedUpdates = 0
        var events: UInt64 = 0
        var transactions = 0
        /// The last line of the last committed transaction: lines after it
        /// that are not among the rejected ones were not written.
        var committedThrough = 0
    }

    private struct Line {
        var number: Int
        var timed: ActivityCommand.Timed
    }

    let store: ActivityStore
    let transactionSize: Int
    /// The groups' pipeline (nil: each group waits for its commit), and its depth.
    private var pipeline: CommandPipeline?
    private let pipelineDepth: Int
    /// Groups handed to the pipeline and not yet accounted for, in order.
    private var inFlight: [(units: [[Line]], ticket: PipelinedWrite<[CommandResult]>)] = []
    private let decoder = OperationDecoder()
    private let onRejected: (Rejection) -> Void
    private(set) var summary = Summary()
    private var group: [[Line]] = []
    private var groupLines = 0
    /// An index batch being collected (from `beginIndexBatch`), and whether
    /// one of its lines was already rejected.
    private var openBatch: [Line]?
    private var openBatchStart = 0
    private var openBatchFailed = false

    /// The user space of lines that name none (`apply --user`); nil: the
    /// default space (and every space for `purgeExpired`).
    let defaultUser: String?

    init(store: ActivityStore, transactionSize: Int, pipeline depth: Int = 0, defaultUser: String? = nil,
         onRejected: @escaping (Rejection) -> Void) {
        self.store = store
        pipelineDepth = depth
        pipeline = depth > 0 ? store.pipeline(depth: depth) : nil
        self.defaultUser = defaultUser
        self.transactionSize = max(1, transactionSize)
        self.onRejected = onRejected
    }

    /// One line of input; blank lines are skipped.
    func add(lineNumber: Int, bytes: [UInt8]) throws {
        guard bytes.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { return }
        var timed: ActivityCommand.Timed
        do {
            // From the bytes: a string that is not UTF-8 is an error naming its member.
            timed = try decoder.decode(bytes)
            if timed.user == nil, case .declareActivityTypes = timed.command {} else if timed.user == nil {
                timed.user = defaultUser
            }
        } catch let error as JSONParseError {
            reject(Rejection(line: lineNumber, column: error.column, message: "malformed JSON at column \(error.column): \(error.reason)"))
            return
        } catch let error as ActivityError {
            reject(Rejection(line: lineNumber, operation: error.operation, field: error.field, message: "\(error)"))
            return
        }
        try add(Line(number: lineNumber, timed: timed))
    }

    private func add(_ line: Line) throws {
        switch line.timed.command.operation {
        case "beginIndexBatch":
            if openBatch != nil { try closeBatch(failedAt: line.number, reason: "beginIndexBatch before the open batch ended") }
            openBatch = [line]
            openBatchStart = line.number
            openBatchFailed = false
        case "endIndexBatch":
            guard openBatch != nil else {
                reject(Rejection(line: line.number, operation: "endIndexBatch", message: "endIndexBatch: no beginIndexBatch before it"))
                return
            }
            openBatch!.append(line)
            try closeBatch()
        case "forgetUser":
            // Alone in its transaction (ActivityStore.write requires it).
            if openBatch != nil {
                reject(Rejection(line: line.number, operation: "forgetUser",
                                 message: "forgetUser: not allowed inside an index batch (it must be alone in its transaction)"))
                return
            }
            try flush()
            try enqueue([line])
            try flush()
        default:
            if openBatch != nil { openBatch!.append(line) } else { try enqueue([line]) }
        }
    }

    /// A line inside an open batch failed to decode: the batch falls with it.
    /// A line rejected before it was decoded (too long to read).
    func rejectLine(_ number: Int, message: String) {
        reject(Rejection(line: number, message: message))
    }

    private func reject(_ rejection: Rejection) {
        summary.rejected += 1
        onRejected(rejection)
        if openBatch != nil { openBatchFailed = true }
    }

    private func closeBatch(failedAt: Int? = nil, reason: String? = nil) throws {
        guard let batch = openBatch else { return }
        openBatch = nil
        if openBatchFailed || failedAt != nil {
            for line in batch {
                reject(Rejection(line: line.number, operation: line.timed.command.operation,
                                 message: "\(line.timed.command.operation): rejected with the index batch that starts at line \(openBatchStart)"
                                     + (reason.map { " (\($0))" } ?? "")))
            }
            return
        }
        try enqueue(batch)
    }

    private func enqueue(_ unit: [Line]) throws {
        if groupLines > 0 && groupLines + unit.count > transactionSize { try flush() }
        group.append(unit)
        groupLines += unit.count
        if groupLines >= transactionSize { try flush() }
    }

    /// Commits what is pending and waits until it is durable; at the end of
    /// input, an unterminated batch is rejected.
    func finish() throws {
        if openBatch != nil { try closeBatch(failedAt: 0, reason: "the input ended before its endIndexBatch") }
        try flush()
        while !inFlight.isEmpty { try settleFirst() }
    }

    /// Commits the group (or hands it to the pipeline).
    private func flush() throws {
        let units = group
        group = []
        groupLines = 0
        guard !units.isEmpty else { return }
        guard let pipeline else { return try commit(units) }
        // Account for what is already durable, without waiting.
        while let first = inFlight.first, first.ticket.isDone { try settleFirst() }
        let ticket: PipelinedWrite<[CommandResult]>
        do {
            ticket = try pipeline.submit(units.flatMap { $0 }.map(\.timed))
        } catch EventLogError.pipelineHalted {
            // A group in flight failed: recover, then commit this one.
            while !inFlight.isEmpty { try settleFirst() }
            return try flush(units)
        }
        inFlight.append((units, ticket))
    }

    private func flush(_ units: [[Line]]) throws {
        group = units
        groupLines = units.reduce(0) { $0 + $1.count }
        try flush()
    }

    /// Waits for the oldest group in flight and accounts for it. When it
    /// failed, every group after it was halted: the failed one is committed
    /// again without its bad lines, the halted ones again after it, in
    /// order, each waiting for its commit; then a new pipeline takes over.
    private func settleFirst() throws {
        let (units, ticket) = inFlight.removeFirst()
        do {
            let results = try ticket.wait().value ?? []
            count(results, lines: units.reduce(0) { $0 + $1.count }, through: units.last?.last?.number)
        } catch {
            var failed = [units]
            for later in inFlight {
                _ = try? later.ticket.wait()
                failed.append(later.units)
            }
            inFlight = []
            pipeline = store.pipeline(depth: pipelineDepth)
            try commit(failed[0], firstAttempt: error)
            for units in failed.dropFirst() { try commit(units) }
        }
    }

    private func count(_ results: [CommandResult], lines: Int, through last: Int?) {
        summary.applied += lines
        summary.transactions += 1
        if let last { summary.committedThrough = max(summary.committedThrough, last) }
        for result in results {
            summary.events += result.positions.map { UInt64($0.count) } ?? 0
            summary.droppedUpdates += result.droppedUpdates.count
        }
    }

    /// Commits `units` in one transaction, waiting for it, dropping rejected
    /// units one at a time; `firstAttempt` is the error of an attempt
    /// already made (through the pipeline).
    private func commit(_ given: [[Line]], firstAttempt: (any Error)? = nil) throws {
        var units = given
        var earlier = firstAttempt
        while !units.isEmpty {
            let lines = units.flatMap { $0 }
            do {
                if let error = earlier {
                    earlier = nil
                    throw error
                }
                count(try store.write(lines.map(\.timed)), lines: lines.count, through: lines.last?.number)
                return
            } catch var error as ActivityError {
                // write names the command only when it ran more than one.
                let index = lines.count == 1 ? 0 : error.commandIndex
                guard let index, index < lines.count else {
                    // Cannot tell which: apply each unit on its own.
                    try flushOneByOne(units)
                    return
                }
                error.commandIndex = nil
                var offset = 0
                for (unitIndex, unit) in units.enumerated() {
                    if index < offset + unit.count {
                        let bad = unit[index - offset]
                        reject(line: bad, error: error, unit: unit)
                        units.remove(at: unitIndex)
                        break
                    }
                    offset += unit.count
                }
            }
        }
    }

    private func flushOneByOne(_ units: [[Line]]) throws {
        for unit in units { try commit([unit]) }
    }

    private func reject(line bad: Line, error: ActivityError, unit: [Line]) {
        summary.rejected += 1
        onRejected(Rejection(line: bad.number, operation: error.operation, field: error.field, message: "\(error)"))
        for other in unit where other.number != bad.number {
            summary.rejected += 1
            onRejected(Rejection(line: other.number, operation: other.timed.command.operation,
                                 message: "\(other.timed.command.operation): rejected with its index batch (line \(bad.number) failed)"))
        }
    }
}
