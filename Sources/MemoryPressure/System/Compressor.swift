import Logging
import Synchronization
import MemoryPressureRuntime
import MemoryPressureMeasurement
import MemoryPressureMonitor
import MemoryPressureCaches
import MemoryPressureLifecycle
import MemoryPressureProcesses

/// The ladder's compression step's hands: whether compression can run here now, the page-out of
/// one app's memory, and which apps are compressed already.
///
/// An app is compressed once per stay in the background, with one exception: an app that keeps
/// running there pages back in what it touches and may allocate more, so once its footprint has
/// grown back by ``regrowthBytes`` over the figure noted after its compression, it may be compressed
/// again (a fleet's workers, growing at 32 MiB a second, were all terminated when each was
/// compressed only once).
///
/// It reads the swap devices (`/proc/swaps` and zram's `mm_stat`, a few microseconds) as the
/// system is made and as each compression step begins, and gives their cost per swapped byte to
/// the process apps' footprints. The first step that would compress says in the log whether
/// compression is on, and why not when it is off; later ones only when that changed.
package final class Compressor: Sendable {
    /// Where an app compressed in this stay stands.
    private enum Compressed {
        /// Being paged out, or paged out with no figure noted after yet: not again meanwhile.
        case pagingOut
        /// Paged out; its footprint as noted after (``noteCompressed(_:footprintBytes:)``), from
        /// which its growth is judged.
        case noted(footprintBytes: Int)
    }

    private struct State {
        /// The apps compressed in this stay in the background.
        var compressed: [AppIdentifier: Compressed] = [:]
        /// Why compression was last found off (nil: on), as the log last said; nothing said yet
        /// while `reported` is false.
        var reason: String?
        var reported = false
    }

    /// Where the compressor reads the swap devices and pages an app out: the kernel's, or a test's.
    package struct Kernel: Sendable {
        /// Reads the swap devices that are on.
        package var readSwap: @Sendable () throws(MemoryPressureError) -> SwapSpace
        /// Pages out the app's memory; the bytes advised, or nil when it has none to page out.
        package var pageOut: @Sendable (AppIdentifier) throws(MemoryPressureError) -> Int?

        package init(
            readSwap: @escaping @Sendable () throws(MemoryPressureError) -> SwapSpace,
            pageOut: @escaping @Sendable (AppIdentifier) throws(MemoryPressureError) -> Int?
        ) {
            self.readSwap = readSwap
            self.pageOut = pageOut
        }

        /// `/proc/swaps` and zram's `mm_stat`; a process app's child's page-out, or an in-process
        /// app's heap's.
        static func real(_ processes: ProcessApps, _ registry: PurgeRegistry) -> Kernel {
            Kernel(readSwap: { () throws(MemoryPressureError) in try SwapSpace.read() }) { [weak processes, weak registry] app throws(MemoryPressureError) in
                if let advised = try processes?.compress(app) { return advised }
                return try registry?.pageOutHeap(of: app)
            }
        }
    }

    private let setting: Compression
    private let processes: ProcessApps
    private let logger: Logger
    private let kernel: Kernel
    private let state = LibraryLock(State())

    init(setting: Compression, processes: ProcessApps, registry: PurgeRegistry, logger: Logger, kernel: Kernel? = nil) {
        self.setting = setting
        self.processes = processes
        self.logger = logger
        self.kernel = kernel ?? .real(processes, registry)
        _ = refresh(reporting: false)
    }

    /// Reads the swap devices again: their cost per swapped byte goes to the process apps'
    /// footprints, whatever the setting (memory the kernel swapped to zram by itself is memory
    /// too). Returns whether the ladder may compress now. With `reporting` (the ladder's step,
    /// which would compress now), says so in the log the first time and whenever that changed.
    func refresh(reporting: Bool = true) -> Bool {
        let reason: String?
        do {
            let space = try kernel.readSwap()
            processes.swapCost.update(from: space)
            reason = setting.mayCompress ? space.unavailableReason : "the configuration turns it off"
        } catch {
            reason = "the swap devices cannot be read: \(error)"
        }
        let changed = state.withLock { state in
            defer { (state.reason, state.reported) = (reason, state.reported || reporting) }
            return reporting && (!state.reported || state.reason != reason)
        }
        if changed {
            if let reason {
                logger.notice("compression of suspended apps is off: \(reason)")
            } else {
                logger.notice("compression of suspended apps is on: suspended process apps are paged out to zram before any is terminated")
            }
        }
        return reason == nil
    }

    /// Why the ladder does not compress, as last found; nil when it does.
    var unavailableReason: String? {
        state.withLock { $0.reason }
    }

    /// How much a compressed app must grow back before it may be compressed again in the same stay.
    static let regrowthBytes = 32 << 20

    /// Whether `app` was compressed in this stay in the background.
    func isCompressed(_ app: AppIdentifier) -> Bool {
        state.withLock { $0.compressed[app] != nil }
    }

    /// Whether `app`, whose footprint is `footprintBytes` now, may be compressed: not yet in this
    /// stay, or grown back by ``regrowthBytes`` since.
    func mayCompress(_ app: AppIdentifier, footprintBytes: Int) -> Bool {
        state.withLock { Self.mayCompress($0.compressed[app], footprintBytes: footprintBytes) }
    }

    /// Whether an app that stands at `compressed` in this stay (nil: not compressed yet) may be
    /// compressed with its footprint at `footprintBytes` (nil: not known, so not again).
    private static func mayCompress(_ compressed: Compressed?, footprintBytes: Int?) -> Bool {
        switch compressed {
        case nil: true
        case .pagingOut: false
        case .noted(let after): footprintBytes.map { $0 >= after + regrowthBytes } ?? false
        }
    }

    /// Pages `app`'s memory out (its child's, for a process app) when it may be now (see
    /// ``mayCompress(_:footprintBytes:)``; without `footprintBytes`, once per stay in the
    /// background). Returns the bytes advised, or nil when it was not paged out, or there was
    /// nothing it could page out (a child that has ended, or a kernel that refuses, said in the log).
    func compress(_ app: App, footprintBytes: Int? = nil) -> Int? {
        let identifier = app.identifier
        let claimed = state.withLock { state in
            guard Self.mayCompress(state.compressed[identifier], footprintBytes: footprintBytes) else { return false }
            state.compressed[identifier] = .pagingOut
            return true
        }
        guard claimed else { return nil }
        do {
            let advised = try kernel.pageOut(identifier)
            guard advised != nil else { return nil }
            if processes.running(identifier) == nil {
                pagedOutOwnMemory.store(true, ordering: .relaxed)
            }
            // What zram spends per byte now that it holds these, then the child read again at
            // that cost: a frozen child counts as last read, and what it holds just changed.
            _ = refresh(reporting: false)
            processes.footprints.readAgain(identifier)
            return advised
        } catch {
            logger.warning("compression of \(identifier) failed: \(error)", metadata: ["app": "\(identifier)"])
            return nil
        }
    }

    /// Whether this process's own memory (an in-process app's heap) was paged out: from then on,
    /// each sample counts what its pages in swap cost.
    private let pagedOutOwnMemory = Atomic<Bool>(false)
    /// What this process's own pages in swap cost, as last read.
    private let ownCompressedBytes = Atomic<Int>(0)

    /// Notes `app`'s footprint as measured after its compression: what its growth is judged from.
    func noteCompressed(_ app: AppIdentifier, footprintBytes: Int) {
        state.withLock { state in
            if state.compressed[app] != nil { state.compressed[app] = .noted(footprintBytes: footprintBytes) }
        }
    }

    /// `app` moved to `state`: back in the foreground, or terminated, it is no longer counted as
    /// compressed (what it touches comes back, and its next stay in the background may compress it
    /// again).
    func moved(_ app: AppIdentifier, to state: AppState) {
        guard state != .suspended, state != .background else { return }
        self.state.withLock { _ = $0.compressed.removeValue(forKey: app) }
    }
}

extension Compressor: FootprintContributor {
    /// 0: an in-process app's footprint counts its heap's bytes whole, paged out or not.
    package func footprintBytes(of identifier: AppIdentifier) -> Int { 0 }

    /// What this process's own pages in swap cost (its `VmSwap` at zram's cost per byte), once an
    /// in-process app was compressed: the process's resident set no longer shows them, and
    /// compressed memory is still memory. Nil before (nothing is read); as last read for
    /// ``/MemoryPressureMonitor/ContributionReading/nothing``.
    package func totalFootprintBytes(reading: ContributionReading) -> Int? {
        guard pagedOutOwnMemory.load(ordering: .relaxed) else { return nil }
        if reading != .nothing {
            let swapped = (try? SwapSpace.swappedBytes(ofProcess: "self")) ?? 0
            ownCompressedBytes.store(processes.swapCost.memoryCost(ofSwapped: swapped), ordering: .relaxed)
        }
        return ownCompressedBytes.load(ordering: .relaxed)
    }
}

/// The process apps and the compressor, as one contributor to the monitor's samples.
final class SystemFootprintContributors: FootprintContributor {
    private let processes: ProcessApps
    private let compressor: Compressor

    init(processes: ProcessApps, compressor: Compressor) {
        self.processes = processes
        self.compressor = compressor
    }

    package func footprintBytes(of identifier: AppIdentifier) -> Int {
        processes.footprintBytes(of: identifier)
    }

    package func totalFootprintBytes(reading: ContributionReading) -> Int? {
        let children = processes.totalFootprintBytes(reading: reading)
        guard let own = compressor.totalFootprintBytes(reading: reading) else { return children }
        return (children ?? 0).addingClamped(own)
    }
}
