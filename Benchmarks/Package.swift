// swift-tools-version: 6.1
// The benchmarks live in their own package so that users of the library never resolve the
// benchmark tool's dependencies.
import PackageDescription

/// The main package's helpers for tests and benchmarks.
let testKit = Target.Dependency.product(name: "MemoryPressureTestKit", package: "swift-memory-pressure")

/// A benchmark suite: an executable target run by the benchmark plugin.
func suite(_ name: String, _ dependencies: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            "BenchmarkSupport",
            "InterposerGuard",
            .product(name: "Benchmark", package: "benchmark"),
            .product(name: "Jemalloc", package: "swift-memory-pressure"),
            .product(name: "MemoryPressure", package: "swift-memory-pressure"),
        ] + dependencies,
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-memory-pressure", path: "../"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // With the malloc interposer, which the plugin preloads to count every allocation. Each
        // suite links InterposerGuard, which makes it safe where jemalloc is the process's malloc
        // (see that target and BENCHMARKS.md, "The malloc interposer and jemalloc").
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // posix_memalign, aligned_alloc and realloc ahead of the preloaded malloc interposer, so that
        // its free never reads an unmapped page before a jemalloc block.
        .target(name: "InterposerGuard", path: "Benchmarks/InterposerGuard"),
        // What every suite shares: the short mode for CI, heap measurement, threshold tolerances,
        // the benchmarks' system configuration. The test kit's helpers (ballast, waits with a
        // deadline, the kernel's reclaim time) come from MemoryPressureTestKit.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Jemalloc", package: "swift-memory-pressure"),
                .product(name: "MemoryPressure", package: "swift-memory-pressure"),
                testKit,
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/Support"
        ),
        suite("Sampling", [testKit]),
        // PurgeableCache against Foundation's NSCache (Foundation is used here only).
        suite("Caches"),
        suite("WarningFanOut"),
        suite("Footprint", [testKit]),
        suite("PurgeLatency", [testKit]),
        suite("Termination", [testKit]),
        suite("Reaction", [testKit]),
        // Ten thousand tenants: per-app costs at 100 to 100,000 apps (issue 17).
        suite("Scale", [testKit]),
        // The heap's raw allocation path against malloc (issue 17).
        suite("Heaps"),
    ],
    swiftLanguageModes: [.v6]
)
