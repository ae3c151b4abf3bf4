// swift-tools-version: 6.1
//
// A Hummingbird 2 service on the activity event log: a starting point for a
// team that embeds the library (README.md here; Docs/Services.md in the
// library). Its own package, beside Benchmarks/, so that the library's users
// never resolve Hummingbird: it depends on the library by path, and a path
// dependency is named after its folder unless given a name, hence
// `name: "ActivityEventLog"` (the library's package name) below.
//
//   swift run ActivityService                  # serves on 127.0.0.1:8080 (README.md)
//   swift test
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "ActivityService",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "ActivityService", targets: ["ActivityService"]),
        .library(name: "ActivityServiceCore", targets: ["ActivityServiceCore"]),
    ],
    dependencies: [
        .package(name: "ActivityEventLog", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // The library's own swift-crypto (3.x): HMAC-SHA256 for the tokens.
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.19.0"),
    ],
    targets: [
        // Everything but `main`: the application, its routes, the tokens, the
        // error mapping, so that the tests build the same application.
        .target(
            name: "ActivityServiceCore",
            dependencies: [
                .product(name: "ActivityDomain", package: "ActivityEventLog"),
                .product(name: "EventLog", package: "ActivityEventLog"),
                .product(name: "TextIndex", package: "ActivityEventLog"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "ActivityService",
            dependencies: ["ActivityServiceCore"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ActivityServiceTests",
            dependencies: [
                "ActivityServiceCore",
                .product(name: "ActivityDomain", package: "ActivityEventLog"),
                .product(name: "EventLog", package: "ActivityEventLog"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
