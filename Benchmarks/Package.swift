// swift-tools-version: 6.1
// The benchmarks live in their own package so that users of the library never resolve the
// benchmark tool's dependencies.
import PackageDescription

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-memory-pressure", path: "../"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Sampling",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Jemalloc", package: "swift-memory-pressure"),
                .product(name: "MemoryPressure", package: "swift-memory-pressure"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/Sampling",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // PurgeableCache against Foundation's NSCache (Foundation is used here only).
        .executableTarget(
            name: "Caches",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Jemalloc", package: "swift-memory-pressure"),
                .product(name: "MemoryPressure", package: "swift-memory-pressure"),
            ],
            path: "Benchmarks/Caches",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
