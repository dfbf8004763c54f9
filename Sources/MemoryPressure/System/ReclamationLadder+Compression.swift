import Jemalloc
import MemoryPressureRuntime
import MemoryPressureMeasurement
import MemoryPressureCaches
import MemoryPressureLifecycle

extension ReclamationLadder {
    /// The most memory one run pages out: a larger excess is left to the runs of the next samples,
    /// so that a run never holds the ladder for long (paging out 200 MiB to zram took about 0.25 s
    /// on this project's machines).
    static let compressionBytesPerRun = 1 << 30

    /// The compression steps, before any termination: suspended apps first
    /// (``ReclamationStep/compressSuspended``), then background apps that keep running
    /// (``ReclamationStep/compressBackground``), each least important band first, largest first,
    /// measuring after each, until the footprint is under target, every such app was compressed, or
    /// the run's bound (``compressionBytesPerRun``) is reached. Returns the last measurement, taken
    /// afresh so that the terminations after it are decided by what compression left.
    ///
    /// A suspended app runs no code, so paging its memory out costs it nothing until it comes back.
    /// A background app that runs pages back in what it touches; what it holds and does not touch
    /// stays compressed, and it keeps its state, where the next step would terminate it. An app is
    /// compressed once per stay in the background, or again once it has grown back by
    /// ``Compressor/regrowthBytes`` (a background app that keeps running).
    ///
    /// A process app whose footprint is under 1 % of what is still to be reclaimed is passed over
    /// (see ``isPointless(_:toward:)``). Nothing runs where compression is off (see ``Compression``).
    func compress(while footprint: LadderFootprint, into run: inout LadderRun) -> LadderFootprint {
        guard footprint.bytes.map({ $0 > target }) ?? true, compressor.refresh() else { return footprint }
        var footprint = footprint
        var advised = 0
        for state in [AppState.suspended, .background] {
            footprint = compress(state, while: footprint, advised: &advised, into: &run)
        }
        return footprint
    }

    /// One compression step: the apps in `state`, least important band first, largest first.
    private func compress(
        _ state: AppState, while footprint: LadderFootprint, advised: inout Int, into run: inout LadderRun
    ) -> LadderFootprint {
        let clock = ContinuousClock()
        let start = clock.now
        let before = footprint.bytes
        var footprint = footprint
        var compressed: [AppIdentifier] = []
        for band in AppImportance.allCases {
            let inBand = apps.apps(in: [state]).filter {
                $0.configuration.importance == band
                    && compressor.mayCompress($0.identifier, footprintBytes: registry.footprint(of: $0.identifier).totalBytes)
            }
            var candidates = VictimHeap(inBand) { registry.footprint(of: $0.identifier).totalBytes }
            while advised < Self.compressionBytesPerRun, let bytes = footprint.bytes, bytes > target,
                let candidate = candidates.popLargest()
            {
                let candidateFootprint = registry.footprint(of: candidate.identifier)
                guard candidate.systemState == state,
                    !Self.isPointless(candidateFootprint, toward: bytes - target),
                    let pagedOut = compressor.compress(candidate, footprintBytes: candidateFootprint.totalBytes)
                else { continue }
                advised = advised.addingClamped(pagedOut)
                compressed.append(candidate.identifier)
                footprint = LadderFootprint(monitor.measure())
                compressor.noteCompressed(candidate.identifier, footprintBytes: registry.footprint(of: candidate.identifier).totalBytes)
            }
        }
        if !compressed.isEmpty {
            let step: ReclamationStep = state == .suspended ? .compressSuspended : .compressBackground
            let released = max(0, (before ?? 0) - (footprint.bytes ?? 0))
            run.steps.append(.init(step: step, duration: clock.now - start, releasedBytes: released, terminated: []))
            logger.info("compressed \(compressed.count) \(state) app(s)", metadata: [
                "apps": "\(compressed.map(\.rawValue))", "advised": "\(advised)",
                "footprint": "\(footprint.bytes.map(String.init) ?? "unknown")", "target": "\(target)",
            ])
        }
        return footprint
    }
}
