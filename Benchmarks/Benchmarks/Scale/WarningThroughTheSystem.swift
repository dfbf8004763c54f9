import Benchmark
import BenchmarkSupport
import MemoryPressure
import MemoryPressureTestKit

/// An app whose launch gives it one view controller.
struct ControllerDelegate: AppDelegate {
    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        app.rootViewController = ViewController()
    }
}

/// A memory warning as a service gets it: `count` apps registered with a ``MemorySystem`` and
/// launched (active, one view controller each), the system running, and the footprint its sample
/// source reports raised above the warning threshold. Measured through the public API alone: the
/// system's own `WarningDelivery.duration` (from the ladder's post to the last delegate), the time
/// from the raised footprint to the recorded delivery, and the process's threads at peak.
struct SystemWarningFigures {
    var deliveryNanoseconds = 0
    var sampleToRecordNanoseconds = 0
    var peakThreads = 0
    var reached = 0

    static func measure(_ count: Int) async throws -> SystemWarningFigures {
        let source = ScriptedSampleSource(residentBytes: 0)
        var configuration = try MemorySystem.Configuration.benchmark(targetBytes: 700 << 20)
        configuration.monitor.sources = [source]
        let system = try MemorySystem(configuration: configuration)
        for index in 0..<count {
            let app = try system.register(try AppIdentifier("app\(index)")) { ControllerDelegate() }
            try await app.launch()
        }
        let deliveries = system.events.stream(bufferLimit: 64)
        let running = Task { try await system.run() }
        defer { running.cancel() }

        let peak = PeakThreadCount()
        let clock = ContinuousClock()
        let start = clock.now
        // 85 % of the 1,000 MiB budget: above warning (80 %), below critical (95 %).
        source.set(residentBytes: 850 << 20, stall: nil)
        var figures = SystemWarningFigures()
        for await event in deliveries {
            guard case .warning(let delivery, _) = event else { continue }
            figures.sampleToRecordNanoseconds = (clock.now - start).wholeNanoseconds
            figures.deliveryNanoseconds = delivery.duration.wholeNanoseconds
            figures.reached = delivery.delegatesReached
            break
        }
        figures.peakThreads = await peak.stop()
        guard figures.reached == count else {
            throw BenchmarkFailure("the system's warning reached \(figures.reached) apps of \(count)")
        }
        running.cancel()
        _ = try? await running.value
        await system.shutDown()
        return figures
    }
}
