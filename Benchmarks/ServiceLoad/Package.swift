// swift-tools-version: 6.1
//
// The service load benchmark (Docs/Benchmarks.md, "How to compare with the peers"; earlier runs: Benchmarks/History/2026-11-notebook.md, "A service under load"):
// the example service (Examples/ActivityService) against the same endpoints
// on GRDB (SQLite in WAL mode, synchronous=FULL, FTS5), loaded with wrk.
// Its own package, so that neither the library nor the example resolves GRDB.
//
//   python3 Benchmarks/ServiceLoad/run_load.py        # from the repository's root
import PackageDescription

let package = Package(
    name: "ServiceLoad",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "ActivityService", path: "../../Examples/ActivityService"),
        .package(name: "ActivityEventLog", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0", traits: []),
    ],
    targets: [
        // The peer: the endpoints the load mixes use, with the example's
        // tokens, bodies and answers, on a GRDB DatabasePool.
        .executableTarget(
            name: "GRDBPeerService",
            dependencies: [
                .product(name: "ActivityServiceCore", package: "ActivityService"),
                .product(name: "ActivityDomain", package: "ActivityEventLog"),
                .product(name: "TextIndex", package: "ActivityEventLog"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
