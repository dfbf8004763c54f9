import Benchmark
import Jemalloc
import MemoryPressure

/// The cost of reading the figures the pressure monitor samples.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )

    Benchmark("jemalloc epoch refresh") { benchmark in
        for _ in benchmark.scaledIterations {
            try Jemalloc.advanceEpoch()
        }
    }

    Benchmark("jemalloc statistics through cached MIBs (no epoch)") { benchmark in
        let reader = try JemallocStatistics.Reader()
        for _ in benchmark.scaledIterations {
            blackHole(try reader.read(advancingEpoch: false))
        }
    }

    Benchmark("jemalloc statistics by name (no epoch)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try MallctlKey.statsAllocated.read())
            blackHole(try MallctlKey.statsActive.read())
            blackHole(try MallctlKey.statsResident.read())
            blackHole(try MallctlKey.statsMapped.read())
            blackHole(try MallctlKey.statsRetained.read())
            blackHole(try MallctlKey.statsMetadata.read())
        }
    }

    Benchmark("arena statistics through cached MIBs (no epoch)") { benchmark in
        let arena = try Arena.create()
        let reader = try ArenaStatistics.Reader()
        for _ in benchmark.scaledIterations {
            blackHole(try reader.read(arena))
        }
    }

    Benchmark("process resident bytes (/proc/self/statm)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try ProcessMemory.current())
        }
    }
}
