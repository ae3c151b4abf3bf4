import ActivityDomain
import EventLog
import Foundation

/// The engine of `apply`: decodes lines, groups them into transactions of
/// `transactionSize` lines, and commits each group's good lines.
///
/// A group is one `ActivityStore.perform`: all or nothing. When a command
/// in it is rejected, the rejected line is reported and the group is
/// retried without it, so the store ends exactly as the good lines make it,
/// each seeing the effects of the good lines before it and none of the bad.
/// Lines from `beginIndexBatch` through `endIndexBatch` form one unit: they
/// are never split across groups, and one rejected line drops the unit.
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
    }

    private struct Line {
        var number: Int
        var timed: ActivityCommand.Timed
    }

    let store: ActivityStore
    let transactionSize: Int
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

    init(store: ActivityStore, transactionSize: Int, defaultUser: String? = nil, onRejected: @escaping (Rejection) -> Void) {
        self.store = store
        self.defaultUser = defaultUser
        self.transactionSize = max(1, transactionSize)
        self.onRejected = onRejected
    }

    /// One line of input; blank lines are skipped.
    func add(lineNumber: Int, bytes: [UInt8]) throws {
        guard bytes.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { return }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            reject(Rejection(line: lineNumber, message: "the line is not valid UTF-8"))
            return
        }
        var timed: ActivityCommand.Timed
        do {
            timed = try decoder.decode(text)
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
            // Alone in its transaction (ActivityStore.perform requires it).
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

    /// Commits what is pending; at the end of input, an unterminated batch
    /// is rejected.
    func finish() throws {
        if openBatch != nil { try closeBatch(failedAt: 0, reason: "the input ended before its endIndexBatch") }
        try flush()
    }

    /// Commits the group, dropping rejected units one at a time.
    private func flush() throws {
        var units = group
        group = []
        groupLines = 0
        while !units.isEmpty {
            let lines = units.flatMap { $0 }
            do {
                let results = try store.perform(lines.map(\.timed))
                summary.applied += lines.count
                summary.transactions += 1
                for result in results {
                    summary.events += result.positions.map { UInt64($0.count) } ?? 0
                    summary.droppedUpdates += result.droppedUpdates.count
                }
                return
            } catch var error as ActivityError {
                // perform names the command only when it ran more than one.
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
        for unit in units {
            group = [unit]
            groupLines = unit.count
            try flush()
        }
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
