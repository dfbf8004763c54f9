import FoundationEssentials

extension App {
    /// Saves `state` in the app's state archive, to be handed back in
    /// `LaunchOptions.restoredState` when the app launches again, for example after the system
    /// terminated it while suspended. Call it from `didEnterBackground`.
    ///
    /// The state is encoded as JSON and written atomically; when the write fails, the state saved
    /// before is kept and the error says why.
    public nonisolated func saveState<State: Encodable>(_ state: State) throws(MemoryPressureError) {
        guard let stateArchive else { throw .noStateArchive(app: identifier) }
        let bytes: [UInt8]
        do {
            bytes = Array(try JSONEncoder().encode(state))
        } catch {
            throw .stateEncodingFailed(app: identifier, reason: "\(error)")
        }
        try stateArchive.save(bytes, for: identifier)
    }

    /// `options`, with the archived state restored into them when they carry none.
    nonisolated func restoringState(into options: LaunchOptions) -> LaunchOptions {
        guard options.restoredState == nil, let stateArchive else { return options }
        var options = options
        do {
            options.restoredState = try stateArchive.load(for: identifier)
        } catch {
            options.restorationFailure = error
            events?.emit(.restorationFailed(app: identifier, error))
        }
        return options
    }
}

extension LaunchOptions {
    /// The restored state decoded as `State`, or nil when there is none.
    public func restoredState<State: Decodable>(as type: State.Type) throws(MemoryPressureError) -> State? {
        guard let restoredState else { return nil }
        do {
            return try JSONDecoder().decode(type, from: Data(restoredState))
        } catch {
            throw .stateDecodingFailed(reason: "\(error)")
        }
    }
}
