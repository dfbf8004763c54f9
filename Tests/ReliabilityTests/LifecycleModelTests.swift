@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

/// Seeded random sequences of launches (foreground and background), interruptions, backgrounding,
/// background tasks begun and ended, suspensions, returns, terminations, notifications and memory
/// warnings, applied to real apps and to `LifecycleModel`, which steps the apps' own lifecycle state
/// machine on one thread. After every step each app's state, the lifecycle events it emitted, what
/// its delegate and observer saw, and the step's error or task must match: the apps, with their
/// locks, run loops and outboxes, do what their machine decides. A failure names the seed and the
/// shortest failing prefix that replays.
///
/// A run allocates and frees steadily for seconds, which moves the process's resident bytes: it
/// runs alone among the tests that measure them.
@Suite(.timeLimit(.minutes(5)), .exclusiveMemoryUse)
struct LifecycleModelTests {
    static let seeds: [UInt64] = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89]
    static let stepsPerSeed = 10_000
    static let appCount = 4

    @Test(arguments: seeds)
    func realAppsFollowTheModel(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        var model = LifecycleModel(identifiers: try Self.identifiers())
        var operations: [LifecycleOperation] = []
        let harness = try await LifecycleHarness(identifiers: model.identifiers)
        for step in 0..<Self.stepsPerSeed {
            let operation = model.nextOperation(using: &random)
            operations.append(operation)
            let expected = model.apply(operation)
            let observed = await harness.apply(operation)
            guard observed == expected else {
                await harness.shutDown()
                let prefix = await Self.shortestFailingPrefix(of: operations)
                Issue.record("""
                    seed \(seed): step \(step) (\(operation)) differs from the model
                    expected: \(expected)
                    observed: \(observed)
                    shortest failing prefix found (\(prefix?.count.description ?? "none replays")): \
                    \(prefix?.map(\.description).joined(separator: ", ") ?? "-")
                    """)
                return
            }
        }
        #expect(operations.count == Self.stepsPerSeed)
        await harness.shutDown()
    }

    static func identifiers() throws -> [AppIdentifier] {
        try (0..<appCount).map { try AppIdentifier("app\($0)") }
    }

    /// Whether `operations` diverge from the model when replayed on fresh apps.
    static func fails(_ operations: ArraySlice<LifecycleOperation>) async -> Bool {
        guard let identifiers = try? identifiers(), let harness = try? await LifecycleHarness(identifiers: identifiers) else {
            return true
        }
        var model = LifecycleModel(identifiers: identifiers)
        var diverged = false
        for operation in operations where await harness.apply(operation) != model.apply(operation) {
            diverged = true
            break
        }
        await harness.shutDown()
        return diverged
    }

    /// The shortest prefix of `operations` that still fails on replay (binary search over prefix
    /// lengths), or nil when not even the whole sequence fails again.
    static func shortestFailingPrefix(of operations: [LifecycleOperation]) async -> ArraySlice<LifecycleOperation>? {
        guard await fails(operations[...]) else { return nil }
        var (passing, failing) = (0, operations.count)
        while failing - passing > 1 {
            let middle = (passing + failing) / 2
            if await fails(operations.prefix(middle)) { failing = middle } else { passing = middle }
        }
        return operations.prefix(failing)
    }
}
