import Benchmark
import EventLog
import Foundation
import SyntheticWorkload

/// Events per second of one iteration, reported beside wall clock.
let eventsPerSecond = BenchmarkMetric.custom("events/s", polarity: .prefersLarger, useScalingFactor: false)

/// The engine alone: appends of 300-byte events (the log record with its
/// checksum and hash chain, one projection) and a full rebuild. Each
/// iteration writes a fresh store in the system's temporary directory.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident, eventsPerSecond],
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 10
    )

    for (batch, durability) in [(1, Durability.durable), (500, .durable), (500, .noSync), (5000, .noSync)] {
        let count = batch == 1 ? 300 : 50_000
        Benchmark("append batch \(batch) \(durability.rawValue)") { benchmark in
            let dir = temporaryStore()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var options = StoreOptions()
            options.durability = durability
            let store = try EventStore<SyntheticViews>(path: dir, options: options)
            let events = (0..<batch).map {
                NewEvent(type: SyntheticEvent.type, schemaVersion: 1,
                         payload: SyntheticEvent.payload(writer: 1, sequence: UInt64($0), size: 300))
            }
            let start = DispatchTime.now().uptimeNanoseconds
            benchmark.startMeasurement()
            for _ in 0..<(count / batch) { try store.append(events) }
            benchmark.stopMeasurement()
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            benchmark.measurement(eventsPerSecond, Int(Double(count) / seconds))
        }
    }

    Benchmark("rebuild 100k events") { benchmark in
        let dir = temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = StoreOptions()
        options.durability = .noSync
        let store = try EventStore<SyntheticViews>(path: dir, options: options)
        for b in 0..<200 {
            try store.append((0..<500).map {
                NewEvent(type: SyntheticEvent.type, schemaVersion: 1,
                         payload: SyntheticEvent.payload(writer: UInt64($0 % 7), sequence: UInt64(b * 500 + $0), size: 300))
            })
        }
        let start = DispatchTime.now().uptimeNanoseconds
        benchmark.startMeasurement()
        try store.rebuild(full: true)
        benchmark.stopMeasurement()
        benchmark.measurement(eventsPerSecond, Int(100_000 / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)))
    }
}

func temporaryStore() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)").path
}
