// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "swift-memory-pressure",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Jemalloc", targets: ["Jemalloc"]),
        .library(name: "MemoryPressure", targets: ["MemoryPressure"]),
        .library(name: "MemoryPressureService", targets: ["MemoryPressureService"]),
        // For a child process started as an app: its app's lifecycle callbacks, from the system.
        .library(name: "MemoryPressureClient", targets: ["MemoryPressureClient"]),
        // Helpers for tests and benchmarks of code built on MemoryPressure (see its target).
        .library(name: "MemoryPressureTestKit", targets: ["MemoryPressureTestKit"]),
        .executable(name: "mempressure", targets: ["mempressure"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.7.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.8.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // `tools/ci-docs`: the DocC documentation of Jemalloc and the MemoryPressure modules.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // jemalloc itself, through pkg-config. Linking it makes jemalloc the process's malloc.
        .systemLibrary(
            name: "CJemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"])]
        ),
        // eventfd(2), which the Glibc module leaves out; cgroup v1 memory.pressure_level
        // notifications arrive through one.
        .systemLibrary(name: "CLinuxEvents"),
        // Spawning a child with a step between fork and exec (joining its cgroups), and the pidfd
        // system calls (clone3, pidfd_open, pidfd_send_signal, process_mrelease) Glibc leaves out.
        .systemLibrary(name: "CProcessSpawn"),
        // The typed Swift face of mallctl. Knows nothing of apps.
        .target(
            name: "Jemalloc",
            dependencies: ["CJemalloc"]
        ),
        // The library's layers, bottom first; each imports only those below it, and MemoryPressure
        // re-exports them all (the README's Layout draws the graph).
        // Threads, timers, run loops, locks, events, the clock, units and the error type.
        .target(
            name: "MemoryPressureRuntime",
            dependencies: [
                "Jemalloc",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Samples and their sources: the process's figures, jemalloc, cgroups (v2 and v1), PSI.
        .target(
            name: "MemoryPressureMeasurement",
            dependencies: [
                "MemoryPressureRuntime",
                "CLinuxEvents",
                "Jemalloc",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The pressure monitor and the budget: levels, limits, the footprint account.
        .target(
            name: "MemoryPressureMonitor",
            dependencies: [
                "MemoryPressureRuntime",
                "MemoryPressureMeasurement",
                "CLinuxEvents",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Purgeable caches, app heaps, backing stores and the purge registry.
        .target(
            name: "MemoryPressureCaches",
            dependencies: [
                "MemoryPressureRuntime",
                "MemoryPressureMeasurement",
                "MemoryPressureMonitor",
                "Jemalloc",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The app lifecycle: apps, their state machine, delegates, view controllers,
        // notifications, memory warnings, and the state they save.
        .target(
            name: "MemoryPressureLifecycle",
            dependencies: [
                "MemoryPressureRuntime",
                "MemoryPressureMeasurement",
                "MemoryPressureCaches",
                "Jemalloc",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Child processes as apps: the child, its cgroups and freezer, its client channel.
        .target(
            name: "MemoryPressureProcesses",
            dependencies: [
                "MemoryPressureRuntime",
                "MemoryPressureMeasurement",
                "MemoryPressureMonitor",
                "MemoryPressureLifecycle",
                "MemoryPressureWire",
                "CProcessSpawn",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The library services import: the memory system, the reclamation ladder, the terminator.
        .target(
            name: "MemoryPressure",
            dependencies: [
                "MemoryPressureRuntime",
                "MemoryPressureMeasurement",
                "MemoryPressureMonitor",
                "MemoryPressureCaches",
                "MemoryPressureLifecycle",
                "MemoryPressureProcesses",
                "Jemalloc",
                // The ladder's victim heap.
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The wire format of a process app's client channel, shared by the system's end
        // (MemoryPressureProcesses' ClientChannel) and the child's: the callbacks and their messages.
        .target(name: "MemoryPressureWire"),
        // The child's end of a process app's client channel. Nothing but the C library and the wire
        // format: a child links no more than it needs.
        .target(name: "MemoryPressureClient", dependencies: ["MemoryPressureWire"]),
        // Optional glue for services: a swift-service-lifecycle Service and swift-metrics.
        .target(
            name: "MemoryPressureService",
            dependencies: [
                "MemoryPressure",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Simulated apps and scenarios, written on the public API of MemoryPressure as any user's
        // service would be. Knows nothing of the command line. Not a product: the tool's engine.
        .target(
            name: "MemoryPressureSimulation",
            dependencies: [
                "MemoryPressure",
                "Jemalloc",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The stress tool, and the text it writes: progress, summary, CSV and SVG chart.
        .executableTarget(
            name: "mempressure",
            dependencies: [
                "MemoryPressure",
                // `mempressure app-process`: the tool as a child of `run --processes`.
                "MemoryPressureClient",
                "MemoryPressureSimulation",
                "Jemalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Linked into the tests only: the settings a sanitizer run needs (empty without a sanitizer).
        .target(name: "SanitizerSupport", path: "Tests/SanitizerSupport"),
        // Shared by the test targets and the benchmarks: recording delegates, shared boxes and logs,
        // waits with a deadline, ballast, test configurations. Portable: no Swift Testing, no C.
        .target(
            name: "MemoryPressureTestKit",
            dependencies: [
                "MemoryPressure",
                "Jemalloc",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/MemoryPressureTestKit"
        ),
        // Shared by the test targets, what needs Swift Testing or the sanitizer target: serialises
        // the tests that move or measure process-wide memory, and tells whether a sanitizer runs.
        .target(
            name: "MemoryTestSupport",
            dependencies: ["SanitizerSupport", .product(name: "SystemPackage", package: "swift-system")],
            path: "Tests/MemoryTestSupport"
        ),
        // A child process for the client channel's tests: logs the callbacks it receives, and frees
        // ballast on a memory warning. A dependency of MemoryPressureTests, so built with its tests.
        .executableTarget(
            name: "client-fixture",
            dependencies: ["MemoryPressureClient"],
            path: "Tests/ClientFixture"
        ),
        // A host for the tests of children that must not outlive it: runs three process apps, then
        // ends by SIGKILL or exit(0), never shutDown(); or sweeps, as the next host, what one left.
        .executableTarget(
            name: "host-fixture",
            dependencies: ["MemoryPressure", .product(name: "Logging", package: "swift-log")],
            path: "Tests/HostFixture"
        ),
        .testTarget(name: "JemallocTests", dependencies: ["Jemalloc", "MemoryPressureTestKit", "MemoryTestSupport"]),
        // Each layer's own tests, which import no layer above it.
        .testTarget(
            name: "MemoryPressureRuntimeTests",
            dependencies: ["MemoryPressureRuntime", .product(name: "SystemPackage", package: "swift-system")]
        ),
        .testTarget(
            name: "MemoryPressureMeasurementTests",
            dependencies: [
                "MemoryPressureMeasurement", "MemoryTestSupport", .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "MemoryPressureMonitorTests",
            dependencies: ["MemoryPressureMonitor", .product(name: "SystemPackage", package: "swift-system")]
        ),
        .testTarget(name: "MemoryPressureLifecycleTests", dependencies: ["MemoryPressureLifecycle"]),
        .testTarget(
            name: "MemoryPressureTests",
            dependencies: [
                "MemoryPressure",
                "MemoryPressureClient",
                "client-fixture",
                "host-fixture",
                "Jemalloc",
                "MemoryPressureTestKit",
                "MemoryTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Model-based lifecycle tests, fault injection and bad input thrown at every parser.
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "MemoryPressure",
                "MemoryPressureSimulation",
                "Jemalloc",
                "MemoryPressureTestKit",
                "MemoryTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "MemoryPressureServiceTests",
            dependencies: [
                "MemoryPressureService",
                "MemoryPressure",
                "MemoryPressureTestKit",
                "MemoryTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "MemoryPressureSimulationTests",
            dependencies: [
                "MemoryPressureSimulation",
                "MemoryPressure",
                "MemoryPressureTestKit",
                "MemoryTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "mempressureTests",
            dependencies: ["mempressure", "MemoryPressureSimulation", "MemoryPressure", "MemoryPressureTestKit", "MemoryTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
