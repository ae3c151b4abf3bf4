import ActivityDomain
import EventLog
import Foundation

/// Draws a rebuild's progress (phase, position, events/s, ETA) on a terminal.
func replayProgress(_ progress: Progress) -> (ReplayProgress) -> Void {
    { step in
        let rate = step.seconds > 0 ? Double(step.events) / step.seconds : 0
        let remaining = step.end > step.position ? Double(step.end - step.position) : 0
        let eta = rate > 0 ? String(format: ", ETA %.0f s", remaining / rate) : ""
        progress.update("\(step.phase.rawValue): position \(step.position) of \(step.end), "
            + String(format: "%.0f events/s", rate) + eta)
    }
}

/// The JSON of a rebuild: `{"snapshot","damagedSnapshots","position","eventsApplied","seconds"}`,
/// `snapshot` omitted when the rebuild started from position 1.
func replayJSON(_ report: ReplayReport) -> [String: JSONValue] {
    var members: [String: JSONValue] = [
        "damagedSnapshots": .array(report.damagedSnapshots.map { .integer(Int64($0)) }),
        "position": .integer(Int64(report.position)),
        "eventsApplied": .integer(Int64(report.eventsApplied)),
        "seconds": .double(report.seconds),
    ]
    if let snapshot = report.snapshot { members["snapshot"] = .integer(Int64(snapshot)) }
    if let index = report.index {
        var part: [String: JSONValue] = [
            "damagedSnapshots": .array(index.damagedSnapshots.map { .integer(Int64($0)) }),
            "position": .integer(Int64(index.position)),
            "eventsApplied": .integer(Int64(index.eventsApplied)),
            "seconds": .double(index.seconds),
        ]
        if let snapshot = index.snapshot { part["snapshot"] = .integer(Int64(snapshot)) }
        members["index"] = .object(part)
    }
    return members
}

func replaySummary(_ report: ReplayReport) -> String {
    "from \(report.snapshot.map { "the snapshot at \($0)" } ?? "position 1") to position \(report.position): "
        + "\(report.eventsApplied) events in " + String(format: "%.2f s", report.seconds)
        + (report.damagedSnapshots.isEmpty ? "" : "; damaged snapshots skipped: \(report.damagedSnapshots.map(String.init).joined(separator: ", "))")
        + (report.index.map { index in
            "; the index from \(index.snapshot.map { "its snapshot at \($0)" } ?? "position 1") to position \(index.position): "
                + "\(index.eventsApplied) events in " + String(format: "%.2f s", index.seconds)
        } ?? "")
}
