import Testing

/// A test trait for suites and tests that move or measure process-wide memory: large allocations,
/// purges, the process's resident bytes, jemalloc's process statistics.
///
/// Swift Testing runs suites in parallel, and `.serialized` orders tests only within one suite, so
/// a test that frees 128 MiB can make another suite's "resident bytes rose by 64 MiB" false. Every
/// suite or test with this trait runs alone among those with it, across all test targets of the
/// process. Nested uses (a test inside a suite that holds it) do not wait for themselves.
public struct ExclusiveMemoryUse: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        if ExclusiveMemoryUse.isHeld {
            try await function()
            return
        }
        await ExclusiveMemoryUse.lock.acquire()
        do {
            try await ExclusiveMemoryUse.$isHeld.withValue(true) { try await function() }
        } catch {
            await ExclusiveMemoryUse.lock.release()
            throw error
        }
        await ExclusiveMemoryUse.lock.release()
    }

    @TaskLocal private static var isHeld = false
    private static let lock = AsyncLock()
}

extension Trait where Self == ExclusiveMemoryUse {
    /// Runs the suite or test alone among those that move or measure process-wide memory.
    public static var exclusiveMemoryUse: Self { ExclusiveMemoryUse() }
}

/// A first-come, first-served lock that suspends waiters instead of blocking their threads.
private actor AsyncLock {
    private var isLocked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard isLocked else {
            isLocked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            isLocked = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
