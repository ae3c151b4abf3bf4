import ActivityDomain
import Benchmark
import Foundation
import IndexingWorkload

/// Items per second of one iteration, beside wall clock.
let itemsPerSecond = BenchmarkMetric.custom("items/s", polarity: .prefersLarger, useScalingFactor: false)

/// The indexing workload of `eventlog bench` (IndexingWorkload), under
/// package-benchmark: batch indexing into a fresh store per iteration, free-text and structured query latency and a full replay over
/// a store indexed once in setup. Generated items with a fixed seed, so that
/// every run indexes the same bytes.
///
/// Indexing here commits with `noSync`: these benchmarks guard the code's
/// cost, and a durable commit waits for the disk (on the shared virtual disk
/// here, a durable batch-100 run took 0.9 s and then 1.8 s on the same
/// build). `eventlog bench` measures durable commits against the peers.
/// Tolerances are wide on purpose: the machines are shared (two cores, other
/// builds running). They catch a regression of a factor, not of a few
/// percent; compare baselines (`baseline compare`) on a quiet machine for
/// the rest.
///
/// Names have no spaces: package-benchmark 1.38.1 writes a threshold file
/// with spaces turned into `_` but looks it up by the name as given, so a
/// benchmark with a space in its name is never checked.
let benchmarks: @Sendable () -> Void = {
    // Throughput is items/s: package-benchmark's own `.throughput`
    // (iterations/s) rounds to 1 or 2 for iterations of a second.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident, itemsPerSecond],
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 10,
        thresholds: [
            // A run at 2.5× the time fails: a core lost to another build
            // costs 2×. Malloc counts are deterministic: they catch the
            // small regressions.
            .wallClock: .init(relative: [.p90: 150]),
            itemsPerSecond: .init(relative: [.p90: 60]),
            .mallocCountTotal: .init(relative: [.p90: 15]),
            .peakMemoryResident: .init(relative: [.p90: 35]),
        ]
    )

    for batch in [100, 500, 5000] {
        Benchmark("index-batch-\(batch)-noSync") { benchmark in
            let dir = temporaryStore()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let store = try IndexingRun.makeStore(path: dir, durability: .noSync)
            let items = Fixture.items
            let start = ContinuousClock.now
            benchmark.startMeasurement()
            try IndexingRun.index(items, batchSize: batch, into: store)
            benchmark.stopMeasurement()
            benchmark.measurement(itemsPerSecond, perSecond(items.count, since: start))
        }
    }

    // One query an iteration, cycling through the set: the percentiles are
    // those of single queries. No `.throughput`: per iteration it is the
    // inverse of wall clock, and over a mix of cheap and dear queries its
    // p90 as `thresholds update` stores it and as `check` reads it disagree
    // (42K against 8K queries/s on the same build).
    let queryConfiguration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal],
        warmupIterations: 100,
        maxDuration: .seconds(5),
        maxIterations: 4_000,
        thresholds: [
            .wallClock: .init(relative: [.p90: 150]),
            .mallocCountTotal: .init(relative: [.p90: 15]),
        ]
    )
    let freeText = QueryWorkload.freeText(count: 100)
    Benchmark("free-text-query", configuration: queryConfiguration) { benchmark, fixture in
        let query = freeText[fixture.nextQuery(of: freeText.count)]
        do {
            blackHole(try fixture.store.search(query, now: fixture.now))
        } catch {
            benchmark.error("search \(query): \(error)")
        }
    } setup: {
        try Fixture()
    } teardown: {
        Fixture.removeAll()
    }

    Benchmark("structured-query", configuration: queryConfiguration) { benchmark, fixture in
        let query = QueryWorkload.structured[fixture.nextQuery(of: QueryWorkload.structured.count)]
        do {
            blackHole(try fixture.store.query(query, now: fixture.now))
        } catch {
            benchmark.error("query \(query): \(error)")
        }
    } setup: {
        try Fixture()
    } teardown: {
        Fixture.removeAll()
    }

    Benchmark("replay-\(Fixture.indexedCount / 1000)k-indexed-items") { benchmark, fixture in
        let start = ContinuousClock.now
        benchmark.startMeasurement()
        do {
            try fixture.store.eventStore.rebuild(full: true)
        } catch {
            benchmark.error("rebuild: \(error)")
        }
        benchmark.stopMeasurement()
        benchmark.measurement(itemsPerSecond, perSecond(Fixture.indexedCount, since: start))
    } setup: {
        try Fixture()
    } teardown: {
        Fixture.removeAll()
    }
}

func perSecond(_ count: Int, since start: ContinuousClock.Instant) -> Int {
    let elapsed = (ContinuousClock.now - start).components
    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    return Int(Double(count) / max(seconds, 1e-9))
}

func temporaryStore() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("bench-index-\(UUID().uuidString)").path
}
