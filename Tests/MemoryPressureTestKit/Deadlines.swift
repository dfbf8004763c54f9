import MemoryPressure

// Waiting for something that should happen, with a generous deadline that only stops a broken test
// or benchmark from hanging: nothing here asserts timing.
//
// The default is two minutes. A full run under ThreadSanitizer on two cores stalls every test at
// times for 25 s and more (tests of a few microseconds report 24.6 s; one run's first sample of a
// running system came after more than 30 s, the old default, and failed its test).

/// How long the waits below wait by default.
public let generousDeadline: Duration = .seconds(120)

/// What `operation` returns, or nil when `limit` passes first; whichever loses is cancelled.
public func withDeadline<Value: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async -> Value?) async -> Value? {
    await withTaskGroup(of: Value?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            // The bound, not a wait: cancelled as soon as `operation` returns, it runs out only in
            // a test that is broken or hung.
            _ = await poll(every: limit, within: limit) { false }
            return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
    }
}

/// Whether `condition` holds, looking every 10 ms for at most `limit`.
public func eventually(within limit: Duration = generousDeadline, _ condition: () -> Bool) async -> Bool {
    await poll(within: limit, until: condition)
}

/// Looks at `condition` every `interval` until it holds, `limit` passes or the task is cancelled,
/// and returns whether it held.
///
/// The test kits' one wait on real time, for three uses: what the condition reads announces
/// nothing (a kernel file, another process's state, another object's state), so it is looked at
/// again after a while; a count the kernel keeps is sampled (``PeakThreadCount``); and a wait on
/// something that does announce itself is bounded (``withDeadline(_:_:)``). No test asserts
/// anything of how long it takes.
public func poll(
    every interval: Duration = .milliseconds(10), within limit: Duration = generousDeadline, until condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        let left = deadline - ContinuousClock.now
        guard left > .zero, !Task.isCancelled else { return false }
        // Real time is what passes here: a fixed sleep, cut short by the task's cancellation.
        try? await Task.sleep(for: min(interval, left))
    }
    return true
}

extension AsyncStream where Element: Sendable {
    /// The first element that satisfies `predicate`, or nil when none comes within `limit` or the
    /// stream ends first.
    public func first(within limit: Duration = generousDeadline, where predicate: @escaping @Sendable (Element) -> Bool) async -> Element? {
        await withDeadline(limit) {
            for await element in self where predicate(element) { return element }
            return nil
        }
    }

    /// Whether the stream ends within `limit`.
    public func ends(within limit: Duration = generousDeadline) async -> Bool {
        await withDeadline(limit) {
            for await _ in self {}
            return Task.isCancelled ? nil : true
        } ?? false
    }
}

extension MemorySystem {
    /// Runs the system while `body` runs, then cancels it.
    public func running<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}

extension MemorySystemEvent {
    /// The ladder run, when this event is one that got the footprint under target.
    public var runUnderTarget: LadderRun? {
        if case .ladderRun(let run) = self, run.latency != nil { return run }
        return nil
    }
}

extension PressureMonitor {
    /// The monitor's latest sample, or else the first it publishes within `limit` (nil when none
    /// comes first): what a test waits for before it relies on the footprint a running system has
    /// seen (the account counts the memory outside the heaps from its samples).
    public func sampled(within limit: Duration = generousDeadline) async -> MemorySample? {
        // Subscribed before the latest sample is read, so that a sample in between is not missed.
        let events = events.stream()
        if let latest = latestSample { return latest }
        let event = await events.first(within: limit) { if case .sample = $0 { true } else { false } }
        guard case .sample(let sample, _) = event else { return nil }
        return sample
    }
}
