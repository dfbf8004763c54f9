import Synchronization

/// A value that arrives once, from whichever of several racers resolves it first (a callback that
/// returns, or its deadline), awaited by any number of waiters.
final class Completion<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [UInt64: CheckedContinuation<Value?, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Resolves with `value` unless already resolved; returns whether this call resolved it.
    @discardableResult
    func resolve(_ value: Value) -> Bool {
        let waiters: [CheckedContinuation<Value?, Never>]? = state.withLock { state in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters ?? [] {
            waiter.resume(returning: value)
        }
        return waiters != nil
    }

    /// The value, once resolved.
    var value: Value {
        get async {
            // Only cancellation ends the wait without a value, and this wait ignores cancellation.
            await wait(cancellable: false)!
        }
    }

    /// The value, or nil when it has not arrived within `timeout` or the task is cancelled first.
    func value(timeout: Duration) async -> Value? {
        await withTaskGroup(of: Value?.self) { group in
            group.addTask { await self.wait(cancellable: true) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Waits for the value; a `cancellable` wait returns nil as soon as the task is cancelled.
    private func wait(cancellable: Bool) async -> Value? {
        let waiter = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let ready: Value?? = state.withLock { state in
                    if let value = state.value { return .some(value) }
                    if cancellable, Task.isCancelled { return .some(nil) }
                    state.waiters[waiter] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            guard cancellable else { return }
            let continuation = state.withLock { $0.waiters.removeValue(forKey: waiter) }
            continuation?.resume(returning: nil)
        }
    }
}
