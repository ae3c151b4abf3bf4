// swift-tools-version: 6.1
//
// Benchmarks with ordo-one/package-benchmark, in their own package (as
// swift-nio does) so that users of the library never resolve it.
//
//   cd Benchmarks && swift package benchmark
//   swift package benchmark baseline update main
//   swift package benchmark thresholds check    # fails on a regression past Thresholds/
//
// Docs/Benchmarks.md gives the method and the current table.
import PackageDescription

let package = Package(
    name: "ActivityEventLogBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "ActivityEventLog", path: ".."),
        // The test harness's package: the synthetic engine workload.
        .package(name: "ActivityEventLogTools", path: "../Tools"),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "EventLog", package: "ActivityEventLog"),
                .product(name: "SyntheticWorkload", package: "ActivityEventLogTools"),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // The indexing workload of `eventlog bench`, shared through the
        // IndexingWorkload library rather than written twice.
        .executableTarget(
            name: "IndexBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "ActivityDomain", package: "ActivityEventLog"),
                .product(name: "IndexingWorkload", package: "ActivityEventLog"),
            ],
            path: "Benchmarks/IndexBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // A plain executable (no package-benchmark): search latency of one
        // user space beside 300 others against the same space alone
        // (Docs/Benchmarks.md, "`Benchmarks/`").
        .executableTarget(
            name: "SpaceSearchBench",
            dependencies: [
                .product(name: "ActivityDomain", package: "ActivityEventLog"),
                .product(name: "IndexingWorkload", package: "ActivityEventLog"),
                .product(name: "LMDB", package: "ActivityEventLog"),
            ],
            path: "Benchmarks/SpaceSearchBench"
        ),
    ]
)
