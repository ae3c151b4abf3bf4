// swift-tools-version: 6.1
//
// The engine's test harness, beside the product rather than in it: a package
// of its own that depends on the library by path (as Benchmarks/ does), so
// that neither a user's build of the library nor a plain `swift build` of
// the root package compiles any of it.
//
//   SyntheticWorkload   events and projections of a synthetic workload, for
//                       the process tests and Benchmarks/EngineBenchmarks
//   SyntheticAppender   a tool that runs that workload in a process of its
//                       own: writers, readers, holders of the store's locks
//                       and reader slots, for crash and multi-process tests
//                       and Benchmarks/RawLMDB/compare.sh
//   FuzzTargets         fuzz targets over the product's inputs (operations,
//                       queries, records, snapshots, payloads, arguments)
//   eventlog-fuzz       drives them under libFuzzer (Scripts/fuzz.sh)
//
// Its tests are the ones that need those: the engine's and the command
// line's tests with other processes (EventLogProcessTests,
// EventLogCLIProcessTests) and the replay of the committed fuzz corpora
// (FuzzCorpusTests). They share helper files with the root package's tests
// through symbolic links (Support.swift, CLISupport.swift, Sample.swift,
// Stores.swift), one copy each. `bash Scripts/test.sh` builds and runs them
// after the root package's, warnings failing the build as there.
//
//   cd Tools && swift build --build-tests && swift test --skip-build
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "ActivityEventLogTools",
    platforms: [.macOS(.v13)],
    products: [
        // For Benchmarks/ (its own package): the synthetic engine workload.
        .library(name: "SyntheticWorkload", targets: ["SyntheticWorkload"]),
        .executable(name: "SyntheticAppender", targets: ["SyntheticAppender"]),
        .executable(name: "eventlog-fuzz", targets: ["eventlog-fuzz"]),
    ],
    dependencies: [
        // A path dependency is named after its folder unless named.
        .package(name: "ActivityEventLog", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "SyntheticWorkload",
            dependencies: [
                .product(name: "EventLog", package: "ActivityEventLog"),
                .product(name: "LMDB", package: "ActivityEventLog"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "SyntheticAppender",
            dependencies: [
                "SyntheticWorkload",
                .product(name: "EventLog", package: "ActivityEventLog"),
                .product(name: "LMDB", package: "ActivityEventLog"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // Fuzz targets, callable from libFuzzer (`eventlog-fuzz`, built by
        // Scripts/fuzz.sh with -sanitize=fuzzer) and from FuzzCorpusTests,
        // which replays the committed corpora.
        .target(
            name: "FuzzTargets",
            dependencies: [
                .product(name: "ActivityDomain", package: "ActivityEventLog"),
                .product(name: "EventLog", package: "ActivityEventLog"),
                .product(name: "TextIndex", package: "ActivityEventLog"),
                .product(name: "LMDB", package: "ActivityEventLog"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "eventlog-fuzz", dependencies: ["FuzzTargets"], swiftSettings: strict),
        // Engine tests that run SyntheticAppender in other processes, or use
        // SyntheticWorkload's projections (the rest: Tests/EventLogTests).
        .testTarget(
            name: "EventLogProcessTests",
            dependencies: [
                "SyntheticWorkload", "SyntheticAppender",
                .product(name: "EventLog", package: "ActivityEventLog"),
                .product(name: "LMDB", package: "ActivityEventLog"),
                .product(name: "TestSupport", package: "ActivityEventLog"),
            ],
            swiftSettings: strict
        ),
        // Command-line tests with SyntheticAppender beside `eventlog` (the
        // rest: Tests/EventLogCLITests); `eventlog` is built beside them.
        .testTarget(
            name: "EventLogCLIProcessTests",
            dependencies: [
                "SyntheticAppender",
                .product(name: "eventlog", package: "ActivityEventLog"),
                .product(name: "TestSupport", package: "ActivityEventLog"),
            ],
            swiftSettings: strict
        ),
        // The `arguments` target runs the `eventlog` built beside the tests.
        .testTarget(
            name: "FuzzCorpusTests",
            dependencies: ["FuzzTargets", .product(name: "eventlog", package: "ActivityEventLog")],
            exclude: ["Corpus", "Regressions"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
