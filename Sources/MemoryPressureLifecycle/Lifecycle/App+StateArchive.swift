import FoundationEssentials
import MemoryPressureRuntime

extension App {
    /// Saves `state` in the app's state archive, to be handed back in
    /// ``LaunchOptions/restoredState`` when the app launches again, for example after the system
    /// terminated it while suspended. Call it from `didEnterBackground`.
    ///
    /// The state is encoded as JSON and written atomically (a temporary file, `fsync`, a rename
    /// over the old file, `fsync` of the directory) into a directory of the app's own (mode 0700)
    /// under `MemorySystem.Configuration.stateArchiveDirectory`; when the write fails, the state
    /// saved before is kept and the error says why. Saves of one app wait for each other: the last
    /// to return is the one a launch restores. The encoded state, with a 24-byte header, may be at
    /// most 64 MiB. Nothing in the archive is followed through a symbolic link, and an archive
    /// directory others can write (unless sticky and ours) is refused. The app's directory is named
    /// by its identifier in Unicode NFC, so canonically equivalent identifiers share one.
    ///
    /// - Parameter state: The state to save; it replaces the one saved before.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/stateArchiveUnusable`` when
    ///   the system has no state archive directory, the archive's directory is unsafe, or the app's
    ///   directory cannot be made or is a symbolic link, or ``/MemoryPressureRuntime/MemoryPressureError/Code/stateNotSaved``
    ///   when the state cannot be encoded or written or is larger than the limit.
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

    /// Saves `state`, as it is, in the app's state archive, for its next launch's
    /// ``LaunchOptions/restoredState``: what a process app's child saves through its client.
    ///
    /// - Throws: As ``saveState(_:)``, but for the encoding.
    package nonisolated func saveArchivedState(_ state: [UInt8]) throws(MemoryPressureError) {
        guard let stateArchive else { throw .noStateArchive(app: identifier) }
        try stateArchive.save(state, for: identifier)
    }

    /// `options`, with the archived state restored into them when they carry none.
    nonisolated func restoringState(into options: LaunchOptions) -> LaunchOptions {
        guard options.restoredState == nil, let stateArchive else { return options }
        var options = options
        do {
            options.restoredState = try stateArchive.load(for: identifier)
        } catch {
            options.restorationFailure = error
            report(.restorationFailed(app: identifier, error))
        }
        return options
    }
}

extension LaunchOptions {
    /// The restored state decoded as `State` from the JSON ``App/saveState(_:)`` wrote.
    ///
    /// - Parameter type: The type the state was saved as.
    /// - Returns: The state, or nil when there is none.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/stateNotRestored`` when the
    ///   state does not decode as `type`.
    public func restoredState<State: Decodable>(as type: State.Type) throws(MemoryPressureError) -> State? {
        guard let restoredState else { return nil }
        do {
            return try JSONDecoder().decode(type, from: Data(restoredState))
        } catch {
            throw .stateDecodingFailed(reason: "\(error)")
        }
    }
}
