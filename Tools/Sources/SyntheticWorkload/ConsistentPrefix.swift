import EventLog
import LMDB

/// Checks, in one read transaction, that the log is 1…head without a gap,
/// that each writer's events are its sequence 0, 1, 2, … in whole batches,
/// and that the progress projection agrees with the log.
public enum ConsistentPrefix {
    public static func check(_ store: EventStore<SyntheticViews>, batchSize: Int) throws -> String? {
        try store.read { txn in
            let head = try store.head(in: txn)
            var next: [UInt64: UInt64] = [:]
            for position in stride(from: Position(1), through: head, by: 1) {
                guard let event = try store.event(at: position, in: txn) else { return "position \(position) missing below head \(head)" }
                guard let (writer, sequence) = SyntheticEvent.decode(event.payload) else { return "bad payload at \(position)" }
                guard sequence == next[writer, default: 0] else {
                    return "writer \(writer) sequence \(sequence) at \(position), expected \(next[writer, default: 0])"
                }
                next[writer] = sequence + 1
            }
            for (writer, count) in next {
                if count % UInt64(batchSize) != 0 { return "writer \(writer) has \(count) events: a partial batch" }
                let projected = try store.views.progress.counts.get(writer, in: txn) ?? 0
                if projected != count { return "projection says writer \(writer) has \(projected), the log \(count)" }
            }
            return nil
        }
    }
}
