import Foundation
import LMDB

/// Positions of the log, as sorted, disjoint, non-adjacent ranges: what one
/// redaction removes. 10,000 scattered positions take a few bytes each once
/// packed (``RedactionRecord``); a run of consecutive ones takes two varints.
///
/// ```swift
/// let ranges = PositionRanges([3, 4, 5, 9])     // 3...5, 9...9
/// ranges.contains(4)                            // true
/// ```
public struct PositionRanges: Sendable, Equatable, Sequence {
    public fileprivate(set) var ranges: [ClosedRange<Position>] = []

    public init() {}

    /// The ranges of `positions`, in any order, duplicates allowed.
    public init<S: Sequence>(_ positions: S) where S.Element == Position {
        for position in positions.sorted() { append(position) }
    }

    /// Adds `position`, which must not be below the last one added.
    public mutating func append(_ position: Position) {
        if let last = ranges.last {
            precondition(position >= last.upperBound, "positions are appended in order")
            if position == last.upperBound { return }
            if position == last.upperBound + 1 {
                ranges[ranges.count - 1] = last.lowerBound...position
                return
            }
        }
        ranges.append(position...position)
    }

    /// How many positions.
    public var count: UInt64 { ranges.reduce(0) { $0 + UInt64($1.count) } }
    public var isEmpty: Bool { ranges.isEmpty }
    public var first: Position? { ranges.first?.lowerBound }
    public var last: Position? { ranges.last?.upperBound }

    public func contains(_ position: Position) -> Bool {
        var low = 0, high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].upperBound < position { low = mid + 1 } else { high = mid }
        }
        return low < ranges.count && ranges[low].contains(position)
    }

    public func makeIterator() -> FlattenSequence<[ClosedRange<Position>]>.Iterator {
        ranges.joined().makeIterator()
    }
}

/// The engine's own event that authorizes a redaction: type
/// `eventlog.redaction`, schema version 1. `Docs/LogFormat.md` describes
/// its payload for decoders in other languages:
///
/// ```
/// varint  n: the number of ranges
/// n × (varint gap, varint extent): range i is start…start+extent, where
///         start = previous range's end + gap (the previous end of the
///         first range is 0), so gap ≥ 1
/// rest:   the application's context bytes (opaque to the engine; the
///         activity domain writes a protobuf message with the user in
///         field 15)
/// ```
///
/// Every position it names is before its own, and redacted in the same
/// transaction that appended it. `verify` accepts a redacted record only
/// when a later record of this type covers it.
public struct RedactionRecord: Sendable, Equatable {
    public static let type = "eventlog.redaction"
    public static let schemaVersion: UInt32 = 1

    public var positions: PositionRanges
    public var context: [UInt8]

    public init(positions: PositionRanges, context: [UInt8]) {
        self.positions = positions
        self.context = context
    }

    public var payload: [UInt8] {
        var w = ByteWriter(capacity: 4 + positions.ranges.count * 4 + context.count)
        w.varint(UInt64(positions.ranges.count))
        var previous: Position = 0
        for range in positions.ranges {
            w.varint(range.lowerBound - previous)
            w.varint(range.upperBound - range.lowerBound)
            previous = range.upperBound
        }
        w.append(context)
        return w.bytes
    }

    /// Decodes a payload; throws on one that does not follow the format
    /// (varints cut short or too long, ranges out of order, adjacent or overflowing).
    public init(payload: [UInt8]) throws {
        (positions, context) = try payload.withUnsafeBytes { bytes in
            var r = ByteReader(bytes)
            func varint() throws -> UInt64 {
                do throws(ByteError) { return try r.varint() } catch {
                    throw RedactionFormatError("\(RedactionRecord.type): \(error)")
                }
            }
            let n = try varint()
            guard n <= UInt64(bytes.count) else { throw RedactionFormatError("\(RedactionRecord.type): \(n) ranges in \(bytes.count) bytes") }
            var ranges = PositionRanges()
            var previous: Position = 0
            for index in 0..<n {
                let gap = try varint(), extent = try varint()
                let (start, o1) = previous.addingReportingOverflow(gap)
                let (end, o2) = start.addingReportingOverflow(extent)
                // Ranges after the first must leave a hole (else they would be one range).
                guard gap >= (index == 0 ? 1 : 2), !o1, !o2 else {
                    throw RedactionFormatError("\(RedactionRecord.type): range \(index + 1) (gap \(gap), extent \(extent)) is out of order, adjacent or overflows")
                }
                ranges.ranges.append(start...end)
                previous = end
            }
            return (ranges, Array(UnsafeRawBufferPointer(rebasing: bytes[r.offset...])))
        }
    }
}

/// A redaction payload that does not decode as its format says.
public struct RedactionFormatError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
