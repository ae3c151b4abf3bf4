import Crypto
import Foundation
import LMDB

/// What ``EventStore/verify(payloadCheck:progress:)`` found.
public struct LogVerification: Sendable, Equatable {
    /// Records checked, from position 1.
    public var recordsChecked: UInt64
    /// Bytes of records read.
    public var bytesChecked: UInt64
    /// The head at the start of the walk.
    public var head: Position
    /// The first thing wrong, or nil when the log is sound.
    public var firstProblem: LogProblem?
    /// The link of the last record that passed every check (the one before
    /// the first bad position, whatever the problem; the zero link when that
    /// is position 1): write it down somewhere else, and a later verification
    /// proves the history up to it was not rewritten.
    public var lastLink: ChainLink
    /// Redaction records past the head that authorize redacted records of
    /// this log (a follower or a restore that took the redacted records
    /// before the record that redacted them; `Docs/LogFormat.md`, "Pending
    /// authorizations"). Not a problem: the log is valid, but what the
    /// redacted records lost is proven only once the log reaches them.
    public var pendingRedactions: [PendingRedaction] = []

    public var isValid: Bool { firstProblem == nil }
}

/// The first bad position of a log and why it is bad.
public struct LogProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The record's CRC-32C does not match its bytes.
        case checksumMismatch
        /// The payload does not hash to the digest the record keeps.
        case payloadDigestMismatch
        /// The record's link does not follow from its predecessor's.
        case chainBreak
        /// A position is missing: the next record has a higher one.
        case gap
        /// The record's length fields do not fit its bytes, or its format is unknown.
        case malformedRecord
        /// The payload does not decode as its type's schema.
        case undecodablePayload
        /// The log ends before (or after) the head the store recorded at its last commit.
        case truncated
        /// A projection's checkpoint is past the head.
        case checkpointAhead
        /// The type is not 1 to 255 UTF-8 bytes long.
        case invalidTypeLength
        /// A flag bit other than bit 0 (redacted) is set.
        case reservedFlagSet
        /// The record is flagged redacted but keeps a payload.
        case redactedWithPayload
        /// The record is flagged redacted, but no later redaction record covers it.
        case unauthorizedRedaction
        /// A redaction record's payload does not follow its format, or names
        /// a position at or after its own.
        case malformedRedaction
    }

    public var position: Position
    public var kind: Kind
    public var detail: String

    public var description: String { "position \(position): \(kind.rawValue): \(detail)" }
}

/// Progress of a long walk, for a terminal.
public struct WalkProgress: Sendable {
    public var position: Position
    public var end: Position
    public var bytes: UInt64
}

extension EventStore {
    /// Walks the whole log and checks, record by record: the key is the next
    /// position (no gap), the record is well formed, its CRC-32C, its payload
    /// digest (unless redacted), its link of the hash chain, and, through
    /// `payloadCheck`, that the payload decodes. Then that the log ends where
    /// the store's recorded head says, and that no checkpoint is past it.
    ///
    /// Reads in short read transactions up to the head it found at the start,
    /// so it runs beside writers.
    ///
    /// ```swift
    /// let report = try store.verify()
    /// if let problem = report.firstProblem { print(problem) }  // "position 17: chainBreak: …"
    /// ```
    public func verify(payloadCheck: ((RecordedEvent) throws -> Void)? = nil,
                       progress: ((WalkProgress) -> Void)? = nil) throws -> LogVerification {
        // The last position only: its record is checked by the walk, and a
        // damaged one is a problem to report there, not an error.
        let (end, recorded) = try environment.read { txn in
            (try lastPosition(in: txn), try databases.recordedHead(in: txn))
        }
        var report = LogVerification(recordsChecked: 0, bytesChecked: 0, head: end, firstProblem: nil, lastLink: .zero)
        var link = ChainLink.zero
        var audit = RedactionAudit()
        var next: Position = 1
        let chunk = 8192
        walk: while next <= end {
            let problem: LogProblem? = try environment.read { txn in
                let cursor = try databases.log.cursor(in: txn)
                var entry = try next.withEncodedBytes { try cursor.seekBytes(atOrAfter: $0) }
                var count = 0
                while let (key, value) = entry, count < chunk {
                    let position = (try? UInt64.decode(lmdbBytes: key)) ?? 0
                    if position > end && next > end { return nil }
                    if position != next {
                        return LogProblem(position: next, kind: .gap,
                                          detail: "expected position \(next), the next record is at \(position)")
                    }
                    let view = RecordLayout.View(bytes: value)
                    if let problem = check(view, at: position, previousLink: &link, payloadCheck: payloadCheck, in: txn)
                        ?? audit.note(view, at: position) {
                        return problem
                    }
                    report.recordsChecked += 1
                    report.bytesChecked += UInt64(value.count)
                    next += 1
                    count += 1
                    entry = try cursor.nextBytes()
                }
                if entry == nil && next <= end {
                    return LogProblem(position: next, kind: .gap, detail: "the log ends at \(next - 1)")
                }
                return nil
            }
            report.lastLink = link
            if let problem {
                report.firstProblem = problem
                break walk
            }
            progress?(WalkProgress(position: next - 1, end: end, bytes: report.bytesChecked))
        }
        if report.firstProblem == nil {
            // Pending authorizations past the end of the walk, whole and well formed.
            let pending = try environment.read { try databases.pendingRedactions(in: $0) }
                .filter { $0.position > end }
                .compactMap { record in (try? PendingRedaction.check(record)).map { (record, $0) } }
            (report.firstProblem, report.pendingRedactions) = audit.firstUnauthorized(pending: pending)
        }
        if report.firstProblem == nil {
            report.firstProblem = try checkHead(end: RecordedHead(position: end, link: link), recorded: recorded)
        }
        return report
    }

    private func check(_ view: RecordLayout.View, at position: Position, previousLink: inout ChainLink,
                       payloadCheck: ((RecordedEvent) throws -> Void)?, in txn: ReadTransaction) -> LogProblem? {
        guard view.isWellFormed else {
            return LogProblem(position: position, kind: .malformedRecord,
                              detail: "\(view.bytes.count) bytes do not hold a record of format \(RecordLayout.formats.lowerBound) to \(RecordLayout.format)")
        }
        let stored = view.storedChecksum, computed = view.computedChecksum
        guard stored == computed else {
            return LogProblem(position: position, kind: .checksumMismatch,
                              detail: "stored CRC-32C \(hex(stored)), computed \(hex(computed))")
        }
        if let problem = RedactionAudit.checkRules(view, at: position) { return problem }
        // The payload as appended (decompressed once, for the digest and the payload check).
        var payload: [UInt8]? = nil
        if !view.isRedacted {
            let digestMatches: Bool
            do {
                if payloadCheck != nil && view.isCompressed {
                    // Decompressed into the array the check reads.
                    let bytes = try databases.dictionaries.payload(of: view, at: position, in: txn)
                    payload = bytes
                    digestMatches = bytes.withUnsafeBytes { SHA256.hash(data: $0).elementsEqual(view.payloadDigest) }
                } else {
                    digestMatches = try databases.dictionaries.withPayload(of: view, at: position, in: txn) { bytes in
                        SHA256.hash(data: bytes).elementsEqual(view.payloadDigest)
                    }
                }
            } catch {
                return LogProblem(position: position, kind: .malformedRecord, detail: "\(error)")
            }
            guard digestMatches else {
                return LogProblem(position: position, kind: .payloadDigestMismatch,
                                  detail: "the payload does not hash to the stored SHA-256")
            }
        }
        let link = RecordLayout.link(previous: previousLink, position: position, schemaVersion: view.schemaVersion,
                                     micros: view.micros, payloadDigest: view.payloadDigest, type: view.type)
        guard link == view.link else {
            return LogProblem(position: position, kind: .chainBreak,
                              detail: "the record's link does not follow from position \(position - 1)'s: the record was altered, moved or its predecessor replaced")
        }
        if let payloadCheck, !view.isRedacted, !view.type.elementsEqual(RedactionRecord.type.utf8) {
            let event = view.event(at: position, payload: payload ?? [UInt8](view.storedPayload))
            do { try payloadCheck(event) } catch {
                return LogProblem(position: position, kind: .undecodablePayload, detail: "\(event.type) v\(event.schemaVersion): \(error)")
            }
        }
        // Only a record that passed every check moves the last link: whatever the problem,
        // lastLink is the link of the record before the first bad position.
        previousLink = link
        return nil
    }

    private func checkHead(end: RecordedHead, recorded: RecordedHead?) throws -> LogProblem? {
        if let recorded, recorded.position != end.position || recorded.link != end.link {
            return LogProblem(position: min(recorded.position, end.position) + 1, kind: .truncated,
                              detail: "the store recorded its head at \(recorded.position); the log ends at \(end.position)")
        }
        if recorded == nil && end.position > 0 {
            return LogProblem(position: 1, kind: .truncated, detail: "the store's recorded head is missing")
        }
        // Checkpoints and head from one transaction: writers may have moved both since the walk began.
        return try environment.read { txn in
            let head = try lastPosition(in: txn)
            for projection in views.all {
                if let checkpoint = try databases.checkpoint(of: projection.name, in: txn), checkpoint.position > head {
                    return LogProblem(position: head + 1, kind: .checkpointAhead,
                                      detail: "projection \(projection.name) claims position \(checkpoint.position), past the head \(head)")
                }
            }
            return nil
        }
    }

    /// The log's last position, its record not decoded.
    private func lastPosition(in txn: ReadTransaction) throws -> Position {
        try databases.log.cursor(in: txn).lastBytes().map { try UInt64.decode(lmdbBytes: $0.key) } ?? 0
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}
