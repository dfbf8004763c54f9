import Synchronization

/// A value that arrives once, from whichever of several racers resolves it first (a callback that
/// returns, or its deadline), awaited by any number of waiters.
package final class Completion<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [UInt64: CheckedContinuation<Value?, Never>] = [:]
        /// Waiters that expired (timed out or were cancelled) before they began waiting.
        var expired: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }

    private let state = LibraryLock(State())

    package init() {}

    /// Resolves with `value` unless already resolved; returns whether this call resolved it.
    @discardableResult
    package func resolve(_ value: Value) -> Bool {
        let waiters: [CheckedContinuation<Value?, Never>]? = state.withLock { state in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters ?? [] {
            callOut { waiter.resume(returning: value) }
        }
        return waiters != nil
    }

    /// The value if it has arrived, without waiting: what a waiter over many completions reads
    /// first, so that one already resolved costs neither a suspension nor a deadline.
    package var resolvedValue: Value? {
        state.withLock { $0.value }
    }

    /// The value, once resolved.
    package var value: Value {
        get async {
            // Only an expired wait ends without a value, and this one never expires.
            await wait(makeWaiter(), cancellable: false)!
        }
    }

    /// The value, or nil when it has not arrived within `timeout` or, for a `cancellable` wait, when
    /// the task is cancelled first. A wait that is not cancellable runs its course in a cancelled
    /// task too, so work that must finish (a shutdown) still waits for what it started. The timeout
    /// is a deadline of `timers`, cancelled as soon as the wait ends.
    package func value(timeout: Duration, on timers: DeadlineTimers, cancellable: Bool = true) async -> Value? {
        let waiter = makeWaiter()
        let timer = timers.schedule(at: timers.clock.now + timeout) { [self] in expire(waiter) }
        defer { timers.cancel(timer) }
        return await wait(waiter, cancellable: cancellable)
    }

    private func makeWaiter() -> UInt64 {
        state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
    }

    /// Waits for the value, or until `waiter` expires (see ``expire(_:)``); a `cancellable` wait
    /// expires as soon as the task is cancelled.
    private func wait(_ waiter: UInt64, cancellable: Bool) async -> Value? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let ready: Value?? = state.withLock { state in
                    let expired = state.expired.remove(waiter) != nil
                    if let value = state.value { return .some(value) }
                    if expired { return .some(nil) }
                    state.waiters[waiter] = continuation
                    return nil
                }
                if let ready { callOut { continuation.resume(returning: ready) } }
            }
        } onCancel: {
            if cancellable { expire(waiter) }
        }
    }

    /// Ends `waiter`'s wait without a value: at once when it is waiting, or as soon as it begins.
    private func expire(_ waiter: UInt64) {
        let continuation = state.withLock { state -> CheckedContinuation<Value?, Never>? in
            if let continuation = state.waiters.removeValue(forKey: waiter) { return continuation }
            if state.value == nil { state.expired.insert(waiter) }
            return nil
        }
        callOut { continuation?.resume(returning: nil) }
    }
}
