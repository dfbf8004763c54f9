import Foundation

/// Runs `body`, which blocks (waits for a process to end, reads a pipe to its end, waits on a
/// semaphore), on a thread of its own, and awaits its result.
///
/// A test that blocks where it runs holds a thread of Swift's cooperative pool, which has one per
/// processor: two such tests at once on a 2-core machine stop every other test of the run (under
/// ThreadSanitizer, where the tool takes tens of seconds, long enough to run them out of their time
/// limits). So every wait of the tests for something outside the process goes through here.
public func blockingWait<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// ``blockingWait(_:)`` for a `body` that cannot throw.
public func blockingWait<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(returning: body())
        }
    }
}
