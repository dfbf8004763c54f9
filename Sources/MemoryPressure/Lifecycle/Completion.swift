import Synchronization

/// A value that arrives once, from whichever of several racers resolves it first (a callback that
/// returns, or its deadline), awaited by any number of waiters.
final class Completion<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, waiters: [CheckedContinuation<Value, Never>])>((nil, []))

    init() {}

    /// Resolves with `value` unless already resolved; returns whether this call resolved it.
    @discardableResult
    func resolve(_ value: Value) -> Bool {
        let waiters: [CheckedContinuation<Value, Never>]? = state.withLock { state in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters ?? [] {
            waiter.resume(returning: value)
        }
        return waiters != nil
    }

    /// The value, once resolved.
    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let value = state.withLock { state in
                    if state.value == nil { state.waiters.append(continuation) }
                    return state.value
                }
                if let value { continuation.resume(returning: value) }
            }
        }
    }
}
