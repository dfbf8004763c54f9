// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "swift-memory-pressure",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Jemalloc", targets: ["Jemalloc"]),
        .library(name: "MemoryPressure", targets: ["MemoryPressure"]),
        .library(name: "MemoryPressureSimulation", targets: ["MemoryPressureSimulation"]),
        .executable(name: "mempressure", targets: ["mempressure"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
    ],
    targets: [
        // jemalloc itself, through pkg-config. Linking it makes jemalloc the process's malloc.
        .systemLibrary(
            name: "CJemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"])]
        ),
        // The typed Swift face of mallctl. Knows nothing of apps.
        .target(
            name: "Jemalloc",
            dependencies: ["CJemalloc"]
        ),
        // The library services import.
        .target(
            name: "MemoryPressure",
            dependencies: [
                "Jemalloc",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Simulated apps and scenarios, written on the public API of MemoryPressure as any user's
        // service would be. Knows nothing of the command line.
        .target(
            name: "MemoryPressureSimulation",
            dependencies: [
                "MemoryPressure",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The stress tool.
        .executableTarget(
            name: "mempressure",
            dependencies: [
                "MemoryPressure",
                "MemoryPressureSimulation",
                "Jemalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Shared by the test targets: serialises the tests that move or measure process-wide memory.
        .target(name: "MemoryTestSupport", path: "Tests/MemoryTestSupport"),
        .testTarget(name: "JemallocTests", dependencies: ["Jemalloc", "MemoryTestSupport"]),
        .testTarget(
            name: "MemoryPressureTests",
            dependencies: [
                "MemoryPressure",
                "Jemalloc",
                "MemoryTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "MemoryPressureSimulationTests",
            dependencies: [
                "MemoryPressureSimulation",
                "MemoryPressure",
                "MemoryTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
