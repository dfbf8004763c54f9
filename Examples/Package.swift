// swift-tools-version: 6.1
// Examples of the library in real services. A package of its own, so that users of the library
// never resolve the examples' dependencies (Hummingbird, Prometheus).
import PackageDescription

let package = Package(
    name: "Examples",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-memory-pressure", path: "../"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.7.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0", traits: []),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
    ],
    targets: [
        // An HTTP service that caches rendered pages in a PurgeableCache and gives them back under
        // pressure, with /metrics (Prometheus) and /memory (the latest sample as JSON).
        .executableTarget(
            name: "CachingServer",
            dependencies: [
                .product(name: "MemoryPressure", package: "swift-memory-pressure"),
                .product(name: "MemoryPressureService", package: "swift-memory-pressure"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
