#if canImport(Glibc)
import Glibc
#endif
import Dispatch
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// A flag shared between threads.
final class Flag: Sendable {
    private let value: Atomic<Bool>

    init(_ initial: Bool = false) {
        value = Atomic(initial)
    }

    var isSet: Bool { value.load(ordering: .acquiring) }

    func set(_ newValue: Bool) {
        value.store(newValue, ordering: .releasing)
    }
}

/// Reclamation that neither waits behind warnings nor behind the service's own work.
@Suite(.serialized, .exclusiveMemoryUse)
struct ReactionTests {
    let journal = TestAppJournal()

    /// An app whose warning handler blocks its run loop until `release` is signalled.
    final class BlockingDelegate: AppDelegate {
        let release: DispatchSemaphore
        let entered: DispatchSemaphore

        init(release: DispatchSemaphore, entered: DispatchSemaphore) {
            self.release = release
            self.entered = entered
        }

        func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {
            entered.signal()
            _ = release.wait(timeout: .now() + 60)
        }
    }

    @Test func aSuspendedAppIsTerminatedWhileARunningAppBlocksInItsWarningHandler() async throws {
        let baseline = try settledResidentBytes()
        var configuration = try MemorySystem.Configuration.test(targetBytes: baseline + 16 * mebibyte)
        // Far longer than the test waits: a ladder that waited for warnings would never terminate in time.
        configuration.warningTimeout = .seconds(600)
        let system = try MemorySystem(configuration: configuration)
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        defer { release.signal() }
        let registry = system.registry
        let journal = journal
        let victim = try system.register(.test("victim"), configuration: .patient()) {
            ballastDelegate(128, registry: registry, journal: journal)
        }
        try await victim.launch()
        try await victim.enterBackground()
        #expect(victim.state == .suspended)
        let blocker = try system.register(.test("blocker")) { BlockingDelegate(release: release, entered: entered) }
        try await blocker.launch()

        let events = system.events.stream()
        let termination = try await system.running {
            await events.first(within: .seconds(30)) { if case .termination = $0 { true } else { false } }
        }
        guard case .termination(let record) = termination else {
            Issue.record("no termination")
            return
        }
        // The blocker entered its handler and is still inside it: the termination did not wait.
        #expect(entered.wait(timeout: .now()) == .success)
        #expect(record.app == victim.identifier)
        #expect(record.reason == .systemPressure)
        #expect(record.state == .suspended)
        #expect(blocker.state == .active)
        release.signal()
        try await blocker.terminate(reason: .explicit)
    }

    @Test func reclamationReactsWhileEveryCooperativeThreadIsBusy() async throws {
        let baseline = try settledResidentBytes()
        let system = try MemorySystem(configuration: .test(targetBytes: baseline + 64 * mebibyte))
        let registry = system.registry
        let journal = journal
        let victim = try system.register(.test("victim"), configuration: .patient()) {
            ballastDelegate(96, registry: registry, journal: journal)
        }
        try await victim.launch()
        try await victim.enterBackground()
        #expect(victim.state == .suspended)

        let terminated = DispatchSemaphore(value: 0)
        let poolRanFirst = Flag()
        let probeRan = Flag()
        let observation = system.events.observe { event in
            guard case .termination = event else { return }
            poolRanFirst.set(probeRan.isSet)
            terminated.signal()
        }
        defer { observation.cancel() }

        let outcome = try await system.running { () -> DispatchTimeoutResult in
            let spinning = Flag(true)
            let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
            let cores = max(2, online)
            let spinnersStarted = DispatchSemaphore(value: 0)
            for _ in 0..<(cores * 2) {
                Task.detached {
                    spinnersStarted.signal()
                    var turns = 0
                    while spinning.isSet { turns &+= 1 }
                    _ = turns
                }
            }
            // Once the spinners hold the pool (one a core, this thread on the last), ask it for one
            // more task: it cannot start until they stop. The limit only ends a broken test.
            for _ in 0..<max(0, online - 1) { _ = spinnersStarted.wait(timeout: .now() + 60) }
            Task.detached { probeRan.set(true) }
            // Memory outside any heap, from a thread that is not the pool's, takes the footprint past critical.
            let ballast = DispatchQueue(label: "ballast")
            let grown = DispatchSemaphore(value: 0)
            let pages = Mutex<[UInt8]>([])
            ballast.async {
                pages.withLock { $0 = [UInt8](repeating: 0x5A, count: 192 * mebibyte) }
                grown.signal()
            }
            let result = terminated.wait(timeout: .now() + 60)
            spinning.set(false)
            grown.wait()
            pages.withLock { $0 = [] }
            return result
        }
        #expect(outcome == .success)
        #expect(poolRanFirst.isSet == false)
        #expect(victim.state == .notRunning)
        #expect(system.terminations.first?.app == victim.identifier)
    }
}
