import Foundation

/// What `verify` learns about redactions while it walks the log: the
/// redacted positions and the ranges each redaction record authorizes.
/// At the end every redacted position must be covered by a redaction record
/// at a later position (`Docs/LogFormat.md`, "Redaction").
struct RedactionAudit {
    private var redacted = PositionRanges()
    /// Each redaction record's ranges, tagged with its position.
    private var covered: [(range: ClosedRange<Position>, by: Position)] = []

    /// The record rules of `Docs/LogFormat.md` that the layout alone does
    /// not enforce: type length 1 to 255, reserved flag bits zero, a
    /// redacted record has no payload.
    static func checkRules(_ view: RecordLayout.View, at position: Position) -> LogProblem? {
        let t = view.typeLength
        guard t >= 1, t <= RecordLayout.maxTypeLength else {
            return LogProblem(position: position, kind: .invalidTypeLength,
                              detail: "the type is \(t) bytes; allowed: 1 to \(RecordLayout.maxTypeLength)")
        }
        let allowed = RecordLayout.allowedFlags(format: view.format)
        guard view.flags & ~allowed == 0 else {
            let which = allowed == RecordLayout.redactedFlag ? "only bit 0 (redacted)" : "only bit 0 (redacted) and bit 1 (compressed)"
            return LogProblem(position: position, kind: .reservedFlagSet,
                              detail: "flags byte 0x\(String(view.flags, radix: 16)) in a record of format \(view.format); \(which) may be set")
        }
        if view.isRedacted && view.flags & RecordLayout.compressedFlag != 0 {
            return LogProblem(position: position, kind: .reservedFlagSet,
                              detail: "flags byte 0x\(String(view.flags, radix: 16)): a redacted record has no payload to be compressed (bit 1 clear)")
        }
        if view.isRedacted && view.payloadLength != 0 {
            return LogProblem(position: position, kind: .redactedWithPayload,
                              detail: "flagged redacted but keeps \(view.payloadLength) payload bytes; a redacted record has P = 0")
        }
        return nil
    }

    /// Notes a record that passed every other check.
    mutating func note(_ view: RecordLayout.View, at position: Position) -> LogProblem? {
        if view.isRedacted {
            redacted.append(position)
            return nil
        }
        guard view.type.elementsEqual(RedactionRecord.type.utf8) else { return nil }
        guard view.schemaVersion == RedactionRecord.schemaVersion else {
            return LogProblem(position: position, kind: .malformedRedaction,
                              detail: "\(RedactionRecord.type) of schema version \(view.schemaVersion); this version reads 1")
        }
        let record: RedactionRecord
        do { record = try RedactionRecord(payload: [UInt8](view.storedPayload)) } catch {
            return LogProblem(position: position, kind: .malformedRedaction, detail: "\(error)")
        }
        if let last = record.positions.last, last >= position {
            return LogProblem(position: position, kind: .malformedRedaction,
                              detail: "it names position \(last); a redaction record covers only positions before its own")
        }
        for range in record.positions.ranges { covered.append((range, position)) }
        return nil
    }

    /// The first redacted position that no later redaction record covers,
    /// nor one of `pending` (authorizations past the head, checked): those
    /// it covers are counted per authorization instead.
    func firstUnauthorized(pending: [(record: LogRecord, decoded: RedactionRecord)] = []) -> (problem: LogProblem?, pending: [PendingRedaction]) {
        let sorted = covered.sorted { $0.range.lowerBound < $1.range.lowerBound }
        func cover(of position: Position) -> (range: ClosedRange<Position>, by: Position)? {
            var low = 0, high = sorted.count
            while low < high {
                let mid = (low + high) / 2
                if sorted[mid].range.upperBound < position { low = mid + 1 } else { high = mid }
            }
            return low < sorted.count && sorted[low].range.contains(position) ? sorted[low] : nil
        }
        var uses = [UInt64](repeating: 0, count: pending.count)
        for range in redacted.ranges {
            var p = range.lowerBound
            while p <= range.upperBound {
                if let c = cover(of: p), c.by > p {
                    if c.range.upperBound >= range.upperBound { break }
                    p = c.range.upperBound + 1
                    continue
                }
                guard let index = pending.firstIndex(where: { $0.record.position > p && $0.decoded.positions.contains(p) }) else {
                    let problem = LogProblem(position: p, kind: .unauthorizedRedaction,
                                             detail: "the record is flagged redacted, but no later \(RedactionRecord.type) record covers its position"
                                                + (pending.isEmpty ? "" : ", nor a pending authorization"))
                    return (problem, [])
                }
                uses[index] += 1
                p += 1
            }
        }
        let used = pending.indices.filter { uses[$0] > 0 }.map {
            PendingRedaction(position: pending[$0].record.position, link: pending[$0].record.link, covers: uses[$0])
        }
        return (nil, used)
    }
}
