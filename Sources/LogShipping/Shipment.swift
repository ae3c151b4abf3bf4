import EventLog

/// The records one PostgreSQL transaction of a shipper carries, read from
/// the store in chunks, and the redaction records among them.
///
/// A shipment never ends with a redacted record whose authorization (the
/// later `eventlog.redaction` record that covers it) is not in it: the
/// shipper reads on until it is (``uncovered`` empty). So PostgreSQL never
/// holds a redacted row without the record that authorizes it, and a
/// follower or a restore always finds that record in the stream
/// (`Docs/Scaling.md`, "Erasure").
struct Shipment {
    private(set) var chunks: [[LogRecord]] = []
    /// The redaction records shipped, decoded.
    private(set) var redactions: [(position: Position, record: RedactionRecord)] = []
    /// Redacted records shipped whose redaction record is not in the shipment yet.
    private(set) var uncovered: [Position] = []
    private(set) var count = 0
    private(set) var bytes = 0

    var first: LogRecord? { chunks.first?.first }
    var last: LogRecord? { chunks.last?.last }

    /// Adds the next chunk of the log; throws when a redaction record of the
    /// store's own log does not decode (`eventlog verify` reports it too).
    mutating func add(_ chunk: [LogRecord]) throws {
        for record in chunk {
            if record.isRedacted {
                uncovered.append(record.position)
            } else if record.type == RedactionRecord.type {
                let decoded: RedactionRecord
                do { decoded = try RedactionRecord(payload: try record.payload) } catch {
                    throw ShippingError(.refused, operation: "ship",
                                        "this store's redaction record \(record.position) does not decode (\(error)); `eventlog verify` reports it",
                                        position: record.position)
                }
                redactions.append((record.position, decoded))
                uncovered.removeAll { decoded.positions.contains($0) }
            }
            bytes += record.bytes.count
        }
        count += chunk.count
        chunks.append(chunk)
    }
}

extension PositionRanges {
    /// The positions in pieces of at most `size` (a statement's worth).
    func pieces(of size: UInt64) -> [PositionRanges] {
        var result: [PositionRanges] = []
        var piece = PositionRanges()
        var count: UInt64 = 0
        for range in ranges {
            var start = range.lowerBound
            while start <= range.upperBound {
                let take = Swift.min(range.upperBound - start + 1, size - count)
                for position in start..<(start + take) { piece.append(position) }
                count += take
                start += take
                if count == size {
                    result.append(piece)
                    piece = PositionRanges()
                    count = 0
                }
            }
        }
        if !piece.isEmpty { result.append(piece) }
        return result
    }
}
