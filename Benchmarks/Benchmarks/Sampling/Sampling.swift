import Benchmark
import Jemalloc
import Logging
import MemoryPressure

/// A logger that drops everything, for samplers made once per measurement.
let silent = Logger(label: "benchmark") { _ in SwiftLogNoOpLogHandler() }

/// The cost of reading the figures the pressure monitor samples.
let benchmarks: @Sendable () -> Void = {
    // Each measured run is a thousand operations, so that per-run set-up and the harness's own
    // costs do not swamp operations that take tens of nanoseconds.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )

    // One arena for every run: the epoch refresh merges every arena's statistics, so an arena made
    // per run would make each run slower than the last.
    let sampledArena = Result { () throws(JemallocError) in try Arena.create() }

    Benchmark("jemalloc epoch refresh") { benchmark in
        for _ in benchmark.scaledIterations {
            try Jemalloc.advanceEpoch()
        }
    }

    Benchmark("jemalloc statistics through cached MIBs (no epoch)") { benchmark in
        let reader = try JemallocStatistics.Reader()
        benchmark.startMeasurement()
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
        let arena = try sampledArena.get()
        let reader = try ArenaStatistics.Reader()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try reader.read(arena))
        }
    }

    Benchmark("process resident bytes (/proc/self/statm opened each time)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try ProcessMemory.current())
        }
    }

    // Samplers are made before the measurement starts: making one finds the cgroup and PSI files,
    // which costs far more than a sample, and logs the figures this machine lacks.
    Benchmark("sample: cheap path (statm only)") { benchmark in
        var sampler = MemorySampler(logger: silent)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(sampler.sample(.cheap))
        }
    }

    Benchmark("sample: full (statm, epoch, jemalloc, arena, cgroup, PSI)") { benchmark in
        let arena = try sampledArena.get()
        var sampler = MemorySampler(arenas: { [arena] }, logger: silent)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(sampler.sample(.full))
        }
    }
}
