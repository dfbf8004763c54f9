#if canImport(Glibc)
import Glibc
#endif
import BenchmarkSupport
import Dispatch
import MemoryPressure
import MemoryPressureTestKit

/// A footprint that crosses the critical threshold while the system is at the warning level, with
/// a suspended app of ``victimBytes`` to terminate, at the default configuration; measured from the
/// crossing to the ladder's first action and to the app's pages being back.
///
/// The budget puts the warning threshold 16 MiB over the footprint with the suspended app's
/// ballast. One allocation in the active app's heap then takes the footprint to 4 MiB under the
/// critical threshold; once the system runs, its first sample announces the warning level, the
/// ladder purges and warns, and the monitor samples every 10 ms. After the ladder's first run and
/// a random pause of up to 10 ms, the crossing takes the footprint 4 MiB over the critical
/// threshold, from a thread of its own.
enum CriticalCrossing {
    /// What takes the footprint past the critical threshold.
    enum Kind: Sendable {
        /// One allocation in the active app's heap: the clock starts as it is asked for.
        case appHeap
        /// Bytes from plain `malloc`, every page written: the clock starts at the first sample
        /// that finds the footprint over the threshold.
        case outsideHeaps
    }

    /// The suspended app's ballast, in its own heap.
    static let victimBytes = 64 * mebibyte
    /// How far under the critical threshold the footprint waits, and how far over it the crossing
    /// takes it (as the account sees it: the last sample outside the heaps, plus the heaps' bytes).
    static let margin = 4 * mebibyte

    /// Nanoseconds from the crossing to each point, and around it.
    struct Reaction {
        /// To the start of the ladder's first run at the critical level (``LadderRun/startTime``).
        var firstAction: Int
        /// To the suspended app's termination (``TerminationRecord/time``: its heap closed, before
        /// its run loop lets go of its memory).
        var termination: Int
        /// To the system's termination record, sent once the app's run loop let go of its ballast
        /// and its heap's arena was destroyed (statm, read just after, shows the process's resident
        /// bytes down by at least 90 % of the app's bytes).
        var pagesBack: Int
        /// Outside the heaps: from the last page written to the first sample over the threshold
        /// (0 when that sample came while the pages were still being written).
        var detection: Int?
        /// In an app heap: to the sample the allocation asked for, which announced the level.
        var wake: Int?
        /// In an app heap: how long the crossing allocation took (its pages are faulted in before
        /// it returns).
        var allocation: Int?
    }

    /// What the crossing thread saw.
    private struct Crossed: Sendable {
        /// When the crossing allocation was asked for, or when the last page was written.
        var time: ContinuousClock.Instant
        /// When the allocation returned, or when the first page was written.
        var otherEnd: ContinuousClock.Instant
        /// Resident bytes before the crossing, and once the app's termination was recorded.
        var residentBefore: Int
        var residentAfter = 0
        /// Bytes the crossing added.
        var bytes: Int
    }

    static func measure(_ kind: Kind, saturatingPool: Bool) async throws -> Reaction {
        let baseline = try settledResidentBytes()
        // The warning threshold 16 MiB above the footprint with the victim's ballast.
        let warningRatio = MemoryBudget.Thresholds.standard.ratios.warning
        let system = try MemorySystem(
            configuration: .defaults(budgetBytes: Int(Double(baseline + victimBytes + 16 * mebibyte) / warningRatio))
        )
        let budget = system.configuration.budget
        let failure = SharedBox<String?>(nil)
        // Unowned: the system holds the app, which holds this closure.
        let victim = try system.register(try AppIdentifier("victim")) { [unowned system] in
            BallastDelegate(bytes: victimBytes, heap: system.heap(for:), onFailure: { failure.value = $0 })
        }
        try await victim.launch()
        guard try await victim.enterBackground() == .suspended else {
            throw BenchmarkFailure("the victim is \(victim.state), not suspended")
        }
        if let failure = failure.value { throw BenchmarkFailure(failure) }
        let grower = try system.register(try AppIdentifier("grower")) { IdleDelegate() }
        try await grower.launch()
        let growerHeap = try system.heap(for: grower.identifier)

        // Noted on the threads that report them, as they happen.
        let pagesBack = SharedBox<ContinuousClock.Instant?>(nil)
        let terminated = DispatchSemaphore(value: 0)
        let terminations = system.events.observe { event in
            guard case .termination(let record) = event, record.app == victim.identifier else { return }
            pagesBack.value = .now
            terminated.signal()
        }
        let criticalSample = SharedBox<ContinuousClock.Instant?>(nil)
        let changes = system.monitor.events.observe { event in
            guard case .change(let change) = event, change.kind == .rise, change.level == .critical else { return }
            criticalSample.update { if $0 == nil { $0 = change.sample.time } }
        }
        defer {
            terminations.cancel()
            changes.cancel()
        }

        // Up to 4 MiB under the critical threshold, in the active app's heap, before the system runs:
        // a sample taken while an allocation's pages are being faulted in counts them twice (the
        // account's "too much, never too little"), which would announce the critical level early.
        let footprint = try residentBytes()
        let approachBytes = budget.bytes(enteringAbove: .critical) - margin - footprint
        guard footprint < budget.bytes(enteringAbove: .warning), approachBytes > 0 else {
            throw BenchmarkFailure("the footprint (\(footprint)) is not under the warning threshold (\(budget))")
        }
        let approach = try growerHeap.allocate(byteCount: approachBytes)
        defer { withExtendedLifetime(approach) {} }

        let crossed = try await system.running { () async throws -> Crossed in
            // The first sample announces the warning level; the ladder runs for it.
            let deadline = ContinuousClock.now + .seconds(5)
            while !system.ladderRuns.contains(where: { $0.level == .warning }) {
                guard ContinuousClock.now < deadline else { throw BenchmarkFailure("the ladder did not run at the warning level") }
                try await Task.sleep(for: .milliseconds(1))
            }
            _ = try await system.monitor.sample(after: .now)
            try await Task.sleep(for: .microseconds(Int.random(in: 0..<10_000)))
            return try await OffPool.run(saturatingPool: saturatingPool) {
                guard let sample = system.monitor.latestSample, system.monitor.level == .warning,
                      let footprint = sample.footprintBytes, footprint < budget.bytes(enteringAbove: .critical)
                else {
                    throw BenchmarkFailure("the footprint is not at the warning level: \(String(describing: system.monitor.latestSample))")
                }
                let bytes = budget.bytes(enteringAbove: .critical) - footprint + margin
                let residentBefore = try residentBytes()
                var crossed: Crossed
                let release: () -> Void
                switch kind {
                case .appHeap:
                    let asked = ContinuousClock.now
                    let buffer = try growerHeap.allocate(byteCount: bytes)
                    crossed = Crossed(time: asked, otherEnd: .now, residentBefore: residentBefore, bytes: bytes)
                    release = { withExtendedLifetime(buffer) {} }
                case .outsideHeaps:
                    guard let pages = malloc(bytes) else { throw BenchmarkFailure("malloc(\(bytes)) failed") }
                    let first = ContinuousClock.now
                    touchEveryPage(UnsafeMutableRawBufferPointer(start: pages, count: bytes))
                    crossed = Crossed(time: .now, otherEnd: first, residentBefore: residentBefore, bytes: bytes)
                    release = { free(pages) }
                }
                defer { release() }
                guard terminated.wait(timeout: .now() + 10) == .success else {
                    throw BenchmarkFailure("the suspended app was not terminated within 10 s")
                }
                crossed.residentAfter = try residentBytes()
                return crossed
            }
        }

        guard let run = system.ladderRuns.first(where: { $0.level == .critical }),
              let record = system.terminations.first(where: { $0.app == victim.identifier }),
              record.step == .terminateSuspended,
              let pagesBack = pagesBack.value,
              let criticalSample = criticalSample.value
        else {
            throw BenchmarkFailure("no critical run terminated the suspended app: \(system.ladderRuns), \(system.terminations)")
        }
        guard crossed.residentAfter <= crossed.residentBefore + crossed.bytes - victimBytes * 9 / 10 else {
            throw BenchmarkFailure("statm did not show the app's pages back after its termination record")
        }
        let crossing: ContinuousClock.Instant
        var detection: Int?
        var wake: Int?
        var allocation: Int?
        switch kind {
        case .appHeap:
            // The sample that announced the critical level was taken after the allocation began.
            guard criticalSample >= crossed.time, run.startTime >= crossed.time else {
                throw BenchmarkFailure("the critical level came before the allocation: \(criticalSample), run \(run), allocation \(crossed.time)")
            }
            crossing = crossed.time
            wake = (criticalSample - crossed.time).wholeNanoseconds
            allocation = (crossed.otherEnd - crossed.time).wholeNanoseconds
        case .outsideHeaps:
            guard criticalSample >= crossed.otherEnd else {
                throw BenchmarkFailure("the footprint was over the critical threshold before the pages were written")
            }
            crossing = criticalSample
            detection = max(0, (criticalSample - crossed.time).wholeNanoseconds)
        }
        _ = await system.shutDown()
        return Reaction(
            firstAction: (run.startTime - crossing).wholeNanoseconds,
            termination: (record.time - crossing).wholeNanoseconds,
            pagesBack: (pagesBack - crossing).wholeNanoseconds,
            detection: detection,
            wake: wake,
            allocation: allocation
        )
    }
}
