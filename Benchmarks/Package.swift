// swift-tools-version: 6.1
// The benchmarks live in their own package so that users of the library never resolve the
// benchmark tool's dependencies.
import PackageDescription

/// A benchmark suite: an executable target run by the benchmark plugin.
func suite(_ name: String, _ dependencies: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            "BenchmarkSupport",
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
        // Without the malloc interposer (the standards ask for it; see BENCHMARKS.md, "Why not the
        // malloc interposer"): it puts a 16-byte header on every allocation and, on Linux, reads
        // the 16 bytes before any pointer it is asked to free. Preloaded by the benchmark plugin in
        // this process, whose malloc is jemalloc, that read faults (SIGSEGV) when a block without
        // its header is the first in a fresh mapping: every run of the Termination suite, and the
        // monitor's CPU benchmark before. Allocations are counted from jemalloc's statistics.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: []),
    ],
    targets: [
        // What every suite shares: the short mode for CI, heap measurement, threshold tolerances.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Jemalloc", package: "swift-memory-pressure"),
                .product(name: "MemoryPressure", package: "swift-memory-pressure"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/Support"
        ),
        suite("Sampling", [.product(name: "Logging", package: "swift-log")]),
        // PurgeableCache against Foundation's NSCache (Foundation is used here only).
        suite("Caches"),
        suite("WarningFanOut"),
        suite("Footprint"),
        suite("PurgeLatency"),
        suite("Termination"),
    ],
    swiftLanguageModes: [.v6]
)
