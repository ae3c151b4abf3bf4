import EventLog
import LMDB

// The synthetic workload shared by the `SyntheticAppender` tool and the
// engine's tests, so that a writer in another process and the test process
// run the same projections.

/// Events of the synthetic workload: type `synthetic.appended`, payload
/// `writer (8 bytes) ‖ sequence (8 bytes) ‖ filler`, all big-endian.
public enum SyntheticEvent {
    public static let type = "synthetic.appended"

    public static func payload(writer: UInt64, sequence: UInt64, size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(16, size))
        bytes.withUnsafeMutableBytes {
            $0.storeBytes(of: writer.bigEndian, as: UInt64.self)
            $0.storeBytes(of: sequence.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        // Pseudo-random filler (xorshift): as incompressible as most binary
        // payloads, so the log stores these bytes as they are.
        var state = (writer &* 0x9E37_79B9_7F4A_7C15) ^ (sequence &* 0xBF58_476D_1CE4_E5B9) | 1
        for i in 16..<bytes.count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[i] = UInt8(truncatingIfNeeded: state)
        }
        return bytes
    }

    public static func decode(_ payload: [UInt8]) -> (writer: UInt64, sequence: UInt64)? {
        guard payload.count >= 16 else { return nil }
        return payload.withUnsafeBytes {
            (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
             UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }
}

/// How many events each writer has appended: a projection written in the
/// same transaction as the log, so a reader can check the two agree.
public struct WriterProgress: Projection {
    public let counts: Database<UInt64, UInt64>
    public var name: String { "synthetic.progress" }
    public var version: UInt32 { 1 }
    public var databaseNames: [String] { ["synthetic.progress"] }

    public init(openingIn txn: WriteTransaction) throws {
        counts = try txn.createDatabase("synthetic.progress")
    }

    public func makeWriter(in txn: WriteTransaction) throws -> any ProjectionWriter {
        ClosureProjectionWriter { event in
            guard let (writer, _) = SyntheticEvent.decode(event.payload) else { return }
            let count = try counts.get(writer, in: txn) ?? 0
            try counts.put(count + 1, forKey: writer, in: txn)
        }
    }
}

public struct SyntheticViews: ProjectionSet {
    public let progress: WriterProgress
    public init(openingIn txn: WriteTransaction) throws { progress = try WriterProgress(openingIn: txn) }
    public var all: [any Projection] { [progress] }
}

/// No projections: what the log alone costs.
public struct NoViews: ProjectionSet {
    public init(openingIn txn: WriteTransaction) throws {}
    public var all: [any Projection] { [] }
}
