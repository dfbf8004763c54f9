import Testing

/// A test trait for suites and tests that move or measure process-wide memory: large allocations,
/// purges, the process's resident bytes, jemalloc's process statistics.
///
/// Swift Testing runs suites in parallel, and `.serialized` orders tests only within one suite, so
/// a test that frees 128 MiB can make another suite's "resident bytes rose by 64 MiB" false. Every
/// suite or test with this trait runs alone among those with it or with ``MemoryChurn``, across all
/// test targets of the process. Nested uses (a test inside a suite that holds it) do not wait for
/// themselves.
public struct ExclusiveMemoryUse: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await MemoryUseTurns.shared.take(exclusive: true, for: function)
    }
}

/// A test trait for suites and tests that move process-wide memory, or their cgroup's through
/// children, but measure none of it and assert nothing a neighbour's memory could change (a model
/// run that allocates for seconds, tool runs in child processes).
///
/// They run beside one another, and never beside a suite or test with ``ExclusiveMemoryUse``:
/// what they move cannot make a measuring test's figures false, and the memory tests' turn is not
/// held by each of them in turn while they mostly wait.
public struct MemoryChurn: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await MemoryUseTurns.shared.take(exclusive: false, for: function)
    }
}

extension Trait where Self == ExclusiveMemoryUse {
    /// Runs the suite or test alone among those that move or measure process-wide memory.
    public static var exclusiveMemoryUse: Self { ExclusiveMemoryUse() }
}

extension Trait where Self == MemoryChurn {
    /// Runs the suite or test beside others that only move process-wide memory, and never beside
    /// one that measures it.
    public static var memoryChurn: Self { MemoryChurn() }
}

/// The turns of the memory tests: one exclusive holder, or any number of churners.
private enum MemoryUseTurns {
    static let shared = Turns()

    /// Whether this task already holds a turn (a test inside a suite that holds one).
    @TaskLocal static var isHeld = false

    /// Churners go in whenever no exclusive holder is in, all those waiting together; exclusive
    /// holders go in one at a time, first come first served, once nobody is in. So the few
    /// churners run beside one another rather than each in a turn of its own. Waiters suspend
    /// instead of blocking their threads.
    actor Turns {
        private var exclusiveHeld = false
        private var churners = 0
        private var waitingChurners: [CheckedContinuation<Void, Never>] = []
        private var waitingExclusive: [CheckedContinuation<Void, Never>] = []

        /// Runs `function` in a turn of its kind, taken at once by a nested use.
        nonisolated func take(exclusive: Bool, for function: @Sendable () async throws -> Void) async throws {
            if MemoryUseTurns.isHeld {
                try await function()
                return
            }
            await acquire(exclusive: exclusive)
            do {
                try await MemoryUseTurns.$isHeld.withValue(true) { try await function() }
            } catch {
                await release(exclusive: exclusive)
                throw error
            }
            await release(exclusive: exclusive)
        }

        private func acquire(exclusive: Bool) async {
            if exclusive {
                guard exclusiveHeld || churners > 0 || !waitingChurners.isEmpty || !waitingExclusive.isEmpty else {
                    exclusiveHeld = true
                    return
                }
                await withCheckedContinuation { waitingExclusive.append($0) }
            } else {
                guard exclusiveHeld else {
                    churners += 1
                    return
                }
                await withCheckedContinuation { waitingChurners.append($0) }
            }
        }

        private func release(exclusive: Bool) {
            if exclusive { exclusiveHeld = false } else { churners -= 1 }
            guard !exclusiveHeld else { return }
            let churning = waitingChurners
            waitingChurners = []
            churners += churning.count
            for waiter in churning { waiter.resume() }
            if churners == 0, !waitingExclusive.isEmpty {
                exclusiveHeld = true
                waitingExclusive.removeFirst().resume()
            }
        }
    }
}
