// swift-tools-version: 6.1
//
// The layers, bottom to top. A target may depend only on targets above it in
// this list (never upward); `Docs/Architecture.md` draws the same picture.
//
//   CLMDB, CICU,     C modules: the system's LMDB, ICU and zstd
//   CZstd
//   LMDB             a thin typed layer over LMDB
//   EventLog         the generic event-log engine: log, records, projections,
//                    verification, snapshots, replay (knows nothing of activities)
//   TextIndex        tokenizing, folding, postings, queries
//   ActivityDomain   NSUserActivity and Core Spotlight on the log
//   LogShipping      the log shipped to PostgreSQL: shipper, follower, restore
//                    (EventLog plus PostgresNIO; knows nothing of activities)
//   eventlog         the command-line tool
//
// Beside them, for `eventlog bench` and Benchmarks/: IndexingWorkload (the
// indexing workload and its measured run) and TestSupport (the seeded
// generator it draws items from, and temporary directories, which the tests
// share too). The test harness (the synthetic workload and its process tool,
// the fuzz targets) is a package of its own in Tools/, as the benchmarks
// are in Benchmarks/ and the example service in Examples/ActivityService:
// a user's build of a product, or a plain `swift build` here, compiles none
// of it.
import PackageDescription

// Swift 6 language mode (strict concurrency) everywhere; `.ci/run` fails on
// any warning in this package's own sources.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "ActivityEventLog",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "LMDB", targets: ["LMDB"]),
        .library(name: "EventLog", targets: ["EventLog"]),
        .library(name: "TextIndex", targets: ["TextIndex"]),
        .library(name: "ActivityDomain", targets: ["ActivityDomain"]),
        .library(name: "LogShipping", targets: ["LogShipping"]),
        .executable(name: "eventlog", targets: ["eventlog"]),
        // For Benchmarks/ and Tools/ (packages of their own).
        .library(name: "IndexingWorkload", targets: ["IndexingWorkload"]),
        .library(name: "TestSupport", targets: ["TestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // For services that embed the library (Docs/Services.md): the store,
        // shipper and follower are `Service`s; the engine reports metrics.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // The system's zstd: the codec of the log's compressed payloads.
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        .target(
            name: "CICU",
            linkerSettings: [.linkedLibrary("icuuc")]
        ),
        .target(
            name: "LMDB",
            dependencies: ["CLMDB"],
            swiftSettings: strict
        ),
        .target(
            name: "EventLog",
            dependencies: [
                "LMDB",
                "CZstd",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "TextIndex",
            dependencies: ["LMDB", "CICU"],
            swiftSettings: strict
        ),
        .target(
            name: "ActivityDomain",
            dependencies: [
                "EventLog",
                "TextIndex",
                "LMDB",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Schema"],
            swiftSettings: strict
        ),
        // The log shipped to PostgreSQL (Docs/Scaling.md): a shipper, a
        // follower and a restore, for the CLI and for services that embed it.
        .target(
            name: "LogShipping",
            dependencies: [
                "EventLog",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The indexing workload of `eventlog bench` and Benchmarks/: corpus
        // reading, a multilingual item generator, a measured run.
        .target(
            name: "IndexingWorkload",
            dependencies: ["ActivityDomain", "EventLog", "LMDB", "TestSupport"],
            swiftSettings: strict
        ),
        // What the tests and the workloads share: the seeded generator
        // (SplitMix64) and temporary directories. One copy.
        .target(name: "TestSupport", swiftSettings: strict),
        .executableTarget(
            name: "eventlog",
            dependencies: [
                "ActivityDomain",
                "CICU",
                "IndexingWorkload",
                "EventLog",
                "LogShipping",
                "TextIndex",
                "LMDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB", "CLMDB"], swiftSettings: strict),
        .testTarget(
            name: "EventLogTests",
            dependencies: [
                "EventLog", "LMDB", "CLMDB", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(name: "TextIndexTests", dependencies: ["TextIndex", "LMDB", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "LogShippingTests",
            dependencies: [
                "LogShipping", "ActivityDomain", "EventLog",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ActivityDomainTests",
            dependencies: [
                "ActivityDomain", "EventLog", "TextIndex", "LMDB", "TestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EventLogCLITests",
            dependencies: ["eventlog", "TestSupport"],
            exclude: ["FaultShim"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
