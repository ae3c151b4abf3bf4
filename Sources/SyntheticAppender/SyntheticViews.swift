import EventLog
import LMDB

/// Events of the synthetic workload: type `synthetic.appended`, payload
/// `writer (8 bytes) ‖ sequence (8 bytes) ‖ filler`, all big-endian.
enum SyntheticEvent {
    static let type = "synthetic.appended"

    static func payload(writer: UInt64, sequence: UInt64, size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(16, size))
        bytes.withUnsafeMutableBytes {
            $0.storeBytes(of: writer.bigEndian, as: UInt64.self)
            $0.storeBytes(of: sequence.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        for i in 16..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: Int(sequence) &+ i) }
        return bytes
    }

    static func decode(_ payload: [UInt8]) -> (writer: UInt64, sequence: UInt64)? {
        guard payload.count >= 16 else { return nil }
        return payload.withUnsafeBytes {
            (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
             UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }
}

/// How many events each writer has appended: a projection written in the
/// same transaction as the log, so a reader can check the two agree.
struct WriterProgress: Projection {
    let counts: Database<UInt64, UInt64>
    var name: String { "synthetic.progress" }
    var version: UInt32 { 1 }
    var databaseNames: [String] { ["synthetic.progress"] }

    init(openingIn txn: WriteTransaction) throws {
        counts = try txn.createDatabase("synthetic.progress")
    }

    func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in
            guard let (writer, _) = SyntheticEvent.decode(event.payload) else { return }
            let count = try counts.get(writer, in: txn) ?? 0
            try counts.put(count + 1, forKey: writer, in: txn)
        }
    }
}

struct SyntheticViews: ProjectionSet {
    let progress: WriterProgress
    init(openingIn txn: WriteTransaction) throws { progress = try WriterProgress(openingIn: txn) }
    var all: [any Projection] { [progress] }
}

/// No projections: what the log alone costs.
struct NoViews: ProjectionSet {
    init(openingIn txn: WriteTransaction) throws {}
    var all: [any Projection] { [] }
}
